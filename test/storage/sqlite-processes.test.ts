/**
 * Two processes on one SQLite file: both open it new at the same moment (start-up migration
 * under BEGIN IMMEDIATE), then each runs 25 concurrent claim-the-seat transactions, in two
 * waves released together, so each process's run spans the other's (by construction, not
 * by timing).
 * Exactly one seat may exist, and every loser must have seen it: BEGIN IMMEDIATE keeps the
 * processes' read-check-write transactions from interleaving, with no SQLITE_BUSY surfacing.
 */
import Database from "better-sqlite3"
import { type ChildProcess, spawn, spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as readline from "node:readline"
import { fileURLToPath } from "node:url"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { bundled } from "../http/bundle.js"

const here = path.dirname(fileURLToPath(import.meta.url))
const root = path.resolve(here, "../..")
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "slotwise-sqlite-processes-"))
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))
// The fixtures run bundled, so a busy machine delays their start by little.
let claimSeat = ""
let closeWhenBusy = ""
beforeAll(async () => {
  claimSeat = await bundled("test/storage/fixtures/claim-seat.ts")
  closeWhenBusy = await bundled("test/storage/fixtures/close-when-busy.ts")
}, 120_000)

interface Outcome {
  readonly label: string
  readonly won: ReadonlyArray<string>
  readonly holders: ReadonlyArray<string>
  readonly errors: ReadonlyArray<string>
}

interface Child {
  readonly process: ChildProcess
  readonly ready: Promise<void>
  readonly firstWave: Promise<void>
  readonly done: Promise<{ readonly code: number | null; readonly lines: ReadonlyArray<string>; readonly stderr: string }>
}

const start = (filename: string, label: string, count: number): Child => {
  const child = spawn(process.execPath, [claimSeat, filename, label, String(count)], {
    cwd: root,
    stdio: ["pipe", "pipe", "pipe"]
  })
  const lines: Array<string> = []
  let stderr = ""
  child.stderr!.on("data", (chunk) => (stderr += String(chunk)))
  const signals = new Map<string, () => void>()
  const printed = (text: string) => new Promise<void>((resolve) => signals.set(text, resolve))
  const ready = printed("ready")
  const firstWave = printed("first wave done")
  readline.createInterface({ input: child.stdout! }).on("line", (line) => {
    lines.push(line)
    signals.get(line)?.()
  })
  const done = new Promise<{ code: number | null; lines: ReadonlyArray<string>; stderr: string }>((resolve) =>
    child.on("close", (code) => resolve({ code, lines, stderr }))
  )
  // A process that dies early ends the waits too; its exit code then tells why.
  const orExit = (p: Promise<void>) => Promise.race([p, done.then(() => {})])
  return { process: child, ready: orExit(ready), firstWave: orExit(firstWave), done }
}

// Child processes: generous on a busy machine, where their start-up and the scheduler set the pace.
describe("sqlite storage across processes", { timeout: 90_000 }, () => {
  it("a script that ends by closing a busy storage runs to its end", () => {
    // The checkpoint worker must not let the process exit while close() waits for it.
    for (let run = 0; run < 2; run++) {
      const result = spawnSync(
        process.execPath,
        [closeWhenBusy, path.join(dir, `busy-${run}.db`)],
        { cwd: root, encoding: "utf8", timeout: 60_000 }
      )
      expect({ code: result.status, stdout: result.stdout.trim() }, result.stderr).toEqual({ code: 0, stdout: "closed" })
    }
  })

  it("two processes × 25 concurrent claim-the-seat transactions on one new file: exactly one seat", async () => {
    const filename = path.join(dir, "shared.db")
    const children = [start(filename, "p0", 25), start(filename, "p1", 25)]
    try {
      await Promise.all(children.map((c) => c.ready))
      // The barrier: both are open and waiting; release them together.
      for (const c of children) c.process.stdin!.write("go\n")
      // The second waves start only when both first waves are done: each run spans the other's.
      await Promise.all(children.map((c) => c.firstWave))
      for (const c of children) c.process.stdin!.write("go\n")
      const finished = await Promise.all(children.map((c) => c.done))

      const outcomes = finished.map((f, i) => {
        expect(f.code, `process ${i} exit code; stderr:\n${f.stderr}`).toBe(0)
        return JSON.parse(f.lines[f.lines.length - 1]!) as Outcome
      })
      for (const o of outcomes) expect(o.errors, `errors in ${o.label}`).toEqual([])
      const winners = outcomes.flatMap((o) => o.won)
      expect(winners).toHaveLength(1)
      const holders = outcomes.flatMap((o) => o.holders)
      expect(holders).toHaveLength(50)
      expect(new Set(holders)).toEqual(new Set(winners))

      const db = new Database(filename, { readonly: true })
      try {
        const rows = db.prepare("SELECT id FROM c_seats").all() as Array<{ id: string }>
        expect(rows.map((r) => r.id)).toEqual(winners)
      } finally {
        db.close()
      }
    } finally {
      for (const c of children) if (c.process.exitCode === null) c.process.kill()
    }
  })
})
