/**
 * Check 5 of docs/api.md §3: the check and the write are one atomic step. 50 concurrent creates
 * for one seat give exactly one booking on memory, on one SQLite connection, and on two
 * processes sharing one SQLite file.
 */
import { spawn } from "node:child_process"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { createScheduling, type SchedulingClient } from "../../index.js"

const dir = mkdtempSync(join(tmpdir(), "slotwise-concurrency-"))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

/** A service open around the clock, and tomorrow 10:00 UTC as the contested start. */
const seed = async (s: SchedulingClient) => {
  const staff = await s.staff.create({ name: "Solo", time_zone: "UTC" })
  await s.availability.create({
    staff_id: staff.id,
    type: "weekly",
    weekdays: [1, 2, 3, 4, 5, 6, 7],
    start_time: "00:00",
    end_time: "24:00"
  })
  const service = await s.services.create({ name: "One seat", duration_minutes: 60, staff_ids: [staff.id] })
  const client = await s.clients.create({ name: "Racer" })
  const start = new Date(Math.floor(Date.now() / 86_400_000 + 1) * 86_400_000 + 10 * 3_600_000).toISOString().replace(".000Z", "Z")
  return { service_id: service.id, staff_id: staff.id, client_id: client.id, start }
}

const race = async (s: SchedulingClient, count: number) => {
  const input = await seed(s)
  const outcomes = await Promise.all(
    Array.from({ length: count }, () => s.bookings.create(input).then(() => "created", (e) => String(e.code)))
  )
  return { input, outcomes }
}

const tally = (outcomes: ReadonlyArray<string>) =>
  outcomes.reduce<Record<string, number>>((acc, o) => ({ ...acc, [o]: (acc[o] ?? 0) + 1 }), {})

describe("one seat, fifty concurrent creates", () => {
  it("memory: exactly one booking", async () => {
    const s = await createScheduling({ storage: "memory" })
    const { outcomes } = await race(s, 50)
    expect(tally(outcomes)).toEqual({ created: 1, slot_unavailable: 49 })
    expect((await s.bookings.list({ limit: 100 })).data).toHaveLength(1)
    await s.close()
  })

  it("one SQLite connection: exactly one booking", async () => {
    const s = await createScheduling({ storage: { sqlite: join(dir, "one.db") } })
    const { outcomes } = await race(s, 50)
    expect(tally(outcomes)).toEqual({ created: 1, slot_unavailable: 49 })
    expect((await s.bookings.list({ limit: 100 })).data).toHaveLength(1)
    const created = (await s.events.list({ types: ["booking.created"] })).data
    expect(created).toHaveLength(1)
    await s.close()
  })

  it("two processes on one SQLite file: exactly one booking", async () => {
    const file = join(dir, "shared.db")
    const barrier = join(dir, "go")
    const s = await createScheduling({ storage: { sqlite: file } })
    const input = await seed(s)
    const fixture = new URL("./fixtures/book-one-seat.ts", import.meta.url).pathname
    const runs = [0, 1].map(() => {
      const child = spawn(process.execPath, ["--import", "tsx", fixture, file, barrier, JSON.stringify(input), "25"], {
        stdio: ["ignore", "pipe", "pipe"]
      })
      let out = ""
      let err = ""
      child.stdout.on("data", (d) => (out += d))
      child.stderr.on("data", (d) => (err += d))
      const ready = new Promise<void>((resolve, reject) => {
        child.stdout.on("data", () => out.includes("ready") && resolve())
        child.on("exit", (code) => reject(new Error(`child exited ${code} before it was ready: ${err}`)))
      })
      const done = new Promise<Array<string>>((resolve, reject) =>
        child.on(
          "exit",
          (code) => code === 0 ? resolve(JSON.parse(out.trim().split("\n").pop()!)) : reject(new Error(`child exited ${code}: ${err}`))
        )
      )
      return { ready, done }
    })
    await Promise.all(runs.map((r) => r.ready))
    writeFileSync(barrier, "")
    const outcomes = (await Promise.all(runs.map((r) => r.done))).flat()
    expect(tally(outcomes)).toEqual({ created: 1, slot_unavailable: 49 })
    const bookings = (await s.bookings.list({ limit: 100 })).data
    expect(bookings).toHaveLength(1)
    expect((await s.events.list({ types: ["booking.created"] })).data).toHaveLength(1)
    await s.close()
  }, 60_000)
})
