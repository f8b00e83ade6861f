/**
 * Deliveries survive the process: a dispatching process on a SQLite file is SIGKILLed in the
 * middle of a burst of deliveries while another process keeps committing events; after a
 * restart every event reaches the receiver, with the event id as webhook-id on every copy.
 * Copies beyond one happen only for attempts that were in flight at the kill.
 */
import { type ChildProcess, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as readline from "node:readline"
import { fileURLToPath } from "node:url"
import { afterAll, describe, expect, it } from "vitest"
import { createScheduling } from "../../index.js"
import type { Event } from "../../src/events/index.js"
import { startReceiver, waitFor } from "./receiver.js"

const here = path.dirname(fileURLToPath(import.meta.url))
const root = path.resolve(here, "../..")
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "slotwise-restart-"))
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))

interface Child {
  readonly process: ChildProcess
  readonly ready: Promise<void>
  readonly exited: Promise<{ readonly code: number | null; readonly signal: NodeJS.Signals | null; readonly stderr: string }>
}

const startDispatcher = (filename: string, url: string): Child => {
  const child = spawn(process.execPath, ["--import", "tsx", path.join(here, "fixtures", "dispatcher.ts"), filename, url], {
    cwd: root,
    stdio: ["ignore", "pipe", "pipe"]
  })
  let stderr = ""
  child.stderr!.on("data", (chunk) => (stderr += String(chunk)))
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }>((resolve) =>
    child.on("close", (code, signal) => resolve({ code, signal, stderr }))
  )
  const ready = new Promise<void>((resolve, reject) => {
    readline.createInterface({ input: child.stdout! }).on("line", (line) => {
      if (line === "ready") resolve()
    })
    exited.then((e) => reject(new Error(`dispatcher exited before ready (${e.code}): ${e.stderr}`)))
  })
  return { process: child, ready, exited }
}

describe("kill and restart", () => {
  it("every event reaches the receiver after a SIGKILL mid-burst and a restart", async () => {
    const filename = path.join(dir, "restart.db")
    // A receiver that takes a little while, so the burst is still going when the kill lands.
    const receiver = await startReceiver((_request, res) => {
      setTimeout(() => {
        res.writeHead(200)
        res.end()
      }, 15)
    })
    const first = startDispatcher(filename, receiver.url)
    await first.ready
    const s = await createScheduling({ storage: { sqlite: filename } })
    try {
      const total = 400
      let written = 0
      const writing = (async () => {
        while (written < total) {
          const batch = Array.from({ length: Math.min(20, total - written) }, (_, i) => s.clients.create({ name: `c${written + i}` }))
          written += batch.length
          await Promise.all(batch)
          await new Promise((resolve) => setTimeout(resolve, 5))
        }
      })()
      await waitFor(() => receiver.received.length >= 100, 60_000, "the burst to be under way")
      first.process.kill("SIGKILL")
      const killed = await first.exited
      expect(killed.signal).toBe("SIGKILL")
      const atKill = receiver.received.length
      await writing
      const events: Array<Event> = []
      let cursor: string | undefined
      for (;;) {
        const page = await s.events.list({ limit: 100, ...(cursor !== undefined ? { after: cursor } : {}) })
        events.push(...page.data)
        cursor = page.next_cursor!
        if (!page.has_more) break
      }
      expect(events).toHaveLength(total)
      expect(receiver.ids().size).toBeLessThan(total) // the kill did interrupt the burst

      const second = startDispatcher(filename, receiver.url)
      await second.ready
      await waitFor(() => events.every((e) => receiver.countOf(e.id) >= 1), 60_000, "every event delivered after restart")
      const endpoint = (await s.webhooks.list()).data[0]!
      await waitFor(
        async () => (await s.webhooks.listDeliveries(endpoint.id, { status: "pending" })).data.length === 0,
        60_000,
        "no pending deliveries"
      )
      let succeeded = 0
      cursor = undefined
      for (;;) {
        const page = await s.webhooks.listDeliveries(endpoint.id, {
          status: "succeeded",
          limit: 100,
          ...(cursor !== undefined ? { cursor } : {})
        })
        succeeded += page.data.length
        cursor = page.next_cursor ?? undefined
        if (!page.has_more) break
      }
      expect(succeeded).toBe(total) // one delivery per event, none lost
      expect(receiver.ids()).toEqual(new Set(events.map((e) => e.id)))
      // Copies only for what was in flight at the kill (≤ the per-endpoint concurrency of 8 plus
      // outcomes not yet written).
      const copies = receiver.received.length - total
      expect(copies).toBeGreaterThanOrEqual(0)
      expect(copies).toBeLessThanOrEqual(24)
      console.log(`kill-and-restart: ${atKill} received before the kill, ${copies} repeated after the restart`)

      // SIGTERM: the dispatcher drains and the process exits cleanly.
      second.process.kill("SIGTERM")
      expect((await second.exited).code).toBe(0)
    } finally {
      await s.close()
      await receiver.close()
    }
  }, 240_000) // child processes start slowly on a busy machine: a bound for failures only
})
