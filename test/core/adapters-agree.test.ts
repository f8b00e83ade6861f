/**
 * The same schedule gives the same slots on memory and on SQLite: one-seat services take
 * the lean overlap query on SQLite, multi-seat ones the full one, and both must agree with
 * the memory store row for row.
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { createScheduling, type SchedulingClient } from "../../index.js"

const dir = mkdtempSync(join(tmpdir(), "slotwise-agree-"))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const DAY = 86_400_000
/** A Monday two to three weeks ahead: after notice, within max advance, whenever this runs. */
const MONDAY = (() => {
  const day = Math.floor(Date.now() / DAY) + 14
  return (day + ((11 - (day % 7)) % 7)) * DAY // 1970-01-05 (day 4) was a Monday
})()
const iso = (ms: number) => new Date(ms).toISOString().replace(".000Z", "Z")

const build = async (s: SchedulingClient) => {
  const staff: Array<string> = []
  for (let i = 0; i < 4; i++) {
    const member = await s.staff.create({ name: `S${i}`, time_zone: ["UTC", "Europe/Berlin", "America/New_York", "Asia/Kolkata"][i]! })
    await s.availability.create({ staff_id: member.id, type: "weekly", weekdays: [1, 2, 3, 4, 5], start_time: "08:00", end_time: "17:00" })
    await s.availability.create({
      staff_id: member.id,
      type: "blocked",
      start: iso(MONDAY + DAY + 12 * 3_600_000),
      end: iso(MONDAY + DAY + 14 * 3_600_000)
    })
    staff.push(member.id)
  }
  const solo = await s.services.create({
    name: "Solo",
    duration_minutes: 45,
    buffer_before_minutes: 10,
    buffer_after_minutes: 5,
    slot_interval_minutes: 15,
    staff_ids: staff,
    max_advance_days: 60
  })
  const group = await s.services.create({ name: "Group", duration_minutes: 60, capacity: 3, staff_ids: staff, max_advance_days: 60 })
  const client = await s.clients.create({ name: "C" })
  // The same bookings in the same order on both stores: deterministic starts from the slot lists.
  for (let i = 0; i < 40; i++) {
    const service = i % 3 === 0 ? group.id : solo.id
    const slots = (await s.availability.slots({ service_id: service, start: iso(MONDAY), end: iso(MONDAY + 5 * DAY) })).data
    const slot = slots[(i * 37) % slots.length]!
    await s.bookings.create({
      service_id: service,
      staff_id: slot.staff_id === staff[0] ? staff[0]! : slot.staff_id,
      client_id: client.id,
      start: slot.start
    })
  }
  const firstFree = (await s.availability.slots({ service_id: solo.id, start: iso(MONDAY + 2 * DAY), end: iso(MONDAY + 3 * DAY) })).data[0]!
  await s.availability.hold({ service_id: solo.id, staff_id: firstFree.staff_id, start: firstFree.start })
  const strip = (slots: ReadonlyArray<{ start: string; end: string; staff_id: string; remaining: number }>) =>
    slots.map((x) => [x.start, x.end, staff.indexOf(x.staff_id), x.remaining])
  return {
    solo: strip((await s.availability.slots({ service_id: solo.id, start: iso(MONDAY), end: iso(MONDAY + 7 * DAY) })).data),
    group: strip((await s.availability.slots({ service_id: group.id, start: iso(MONDAY), end: iso(MONDAY + 7 * DAY) })).data)
  }
}

describe("storage adapters agree on slots", () => {
  it("memory and SQLite list the same slots for one-seat and multi-seat services", async () => {
    const memory = await createScheduling({ storage: "memory" })
    const sqlite = await createScheduling({ storage: { sqlite: join(dir, "agree.db") } })
    const [a, b] = [await build(memory), await build(sqlite)]
    expect(a.solo.length).toBeGreaterThan(100)
    expect(a.group.some((slot) => slot[3] !== 3)).toBe(true)
    expect(b).toEqual(a)
    await memory.close()
    await sqlite.close()
  }, 60_000)
})
