/**
 * The polling feed (docs/api.md §4): a client that stores `next_cursor` and polls again sees
 * every event exactly once, in commit order, while other fibers — and, on SQLite, another
 * process — write concurrently.
 */
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { afterAll, describe, expect, it } from "vitest"
import { createScheduling, type SchedulingClient } from "../../index.js"
import type { Event } from "../../src/events/index.js"

const here = path.dirname(fileURLToPath(import.meta.url))
const root = path.resolve(here, "../..")
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "slotwise-feed-"))
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))

const runWriterProcess = (filename: string, count: number) =>
  new Promise<void>((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", "tsx", path.join(here, "fixtures", "writer.ts"), filename, String(count), "3"], {
      cwd: root,
      stdio: ["ignore", "pipe", "pipe"]
    })
    let stderr = ""
    child.stderr.on("data", (chunk) => (stderr += String(chunk)))
    child.on("close", (code) => (code === 0 ? resolve() : reject(new Error(`writer exited ${code}: ${stderr}`))))
  })

/** Polls with small pages until `done()` and the feed is drained; returns every event seen, in order. */
const poll = async (s: SchedulingClient, done: () => boolean): Promise<Array<Event>> => {
  const seen: Array<Event> = []
  let cursor: string | undefined
  for (;;) {
    const finished = done()
    const page = await s.events.list({ limit: 7, ...(cursor !== undefined ? { after: cursor } : {}) })
    seen.push(...page.data)
    cursor = page.next_cursor!
    if (page.data.length === 0) {
      if (finished) return seen
      await new Promise((resolve) => setTimeout(resolve, 2))
    }
  }
}

const writeInProcess = async (s: SchedulingClient, writers: number, each: number) => {
  await Promise.all(Array.from({ length: writers }, async (_, w) => {
    for (let i = 0; i < each; i++) {
      const client = await s.clients.create({ name: `w${w}-${i}` })
      if (i % 5 === 0) await s.clients.update(client.id, { notes: "touched" })
    }
  }))
}

const allEvents = async (s: SchedulingClient): Promise<Array<Event>> => {
  const all: Array<Event> = []
  let cursor: string | undefined
  for (;;) {
    const page = await s.events.list({ limit: 100, ...(cursor !== undefined ? { after: cursor } : {}) })
    all.push(...page.data)
    cursor = page.next_cursor!
    if (!page.has_more) return all
  }
}

const check = (seen: ReadonlyArray<Event>, all: ReadonlyArray<Event>, expected: number) => {
  expect(all).toHaveLength(expected)
  expect(new Set(seen.map((e) => e.id)).size).toBe(seen.length) // never repeated
  expect(seen.map((e) => e.id)).toEqual(all.map((e) => e.id)) // never missed, same (commit) order
}

describe("polling the feed under concurrent writers", () => {
  it("memory: 4 writers, a poller with small pages sees every event once, in order", async () => {
    const s = await createScheduling()
    let writing = true
    const polling = poll(s, () => !writing)
    await writeInProcess(s, 4, 40)
    writing = false
    const seen = await polling
    check(seen, await allEvents(s), 4 * (40 + 8))
    // A type filter keeps its own cursor: still every matching event once.
    const updates = (await s.events.list({ types: ["client.updated"], limit: 100 })).data
    expect(updates).toHaveLength(32)
    await s.close()
  })

  it("SQLite: writers in this process and in another one; the poller sees every event once, in commit order", async () => {
    const filename = path.join(dir, "feed.db")
    const s = await createScheduling({ storage: { sqlite: filename } })
    let writing = true
    const polling = poll(s, () => !writing)
    await Promise.all([writeInProcess(s, 3, 30), runWriterProcess(filename, 60)])
    writing = false
    const seen = await polling
    const all = await allEvents(s)
    check(seen, all, 3 * (30 + 6) + 60)
    expect(all.filter((e) => (e.data.object as { name: string }).name.startsWith("remote"))).toHaveLength(60)
    await s.close()
  }, 120_000) // another process (tsx) starting on a busy machine: a bound for failures only
})
