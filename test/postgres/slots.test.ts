/**
 * Slots and explanations on PostgreSQL, where the core reads a team's schedules together (each
 * read on a pooled connection of its own), agree with the memory store, which reads one after
 * another:
 * one-seat (lean column read) and multi-seat services, a named staff member, an inactive
 * member, a hold, and which missing reference is reported first.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createScheduling, type SchedulingClient } from "../../index.js"
import { postgresScheduling } from "./core.js"
import { createTestDatabase, type TestDatabase } from "./database.js"

let database: TestDatabase
beforeAll(async () => {
  database = await createTestDatabase()
})
afterAll(() => database.drop())

const DAY = 86_400_000
/** A Monday two to three weeks ahead: after notice, within max advance, whenever this runs. */
const MONDAY = (() => {
  const day = Math.floor(Date.now() / DAY) + 14
  return (day + ((11 - (day % 7)) % 7)) * DAY // 1970-01-05 (day 4) was a Monday
})()
const iso = (ms: number) => new Date(ms).toISOString().replace(".000Z", "Z")
const failure = (promise: Promise<unknown>) => promise.then(() => undefined, (error: unknown) => error)

const build = async (s: SchedulingClient) => {
  const staff: Array<string> = []
  for (let i = 0; i < 4; i++) {
    const member = await s.staff.create({ name: `S${i}`, time_zone: ["UTC", "Europe/Berlin", "America/New_York", "Asia/Kolkata"][i]! })
    await s.availability.create({ staff_id: member.id, type: "weekly", weekdays: [1, 2, 3, 4, 5], start_time: "08:00", end_time: "17:00" })
    staff.push(member.id)
  }
  await s.availability.create({
    staff_id: staff[1]!,
    type: "blocked",
    start: iso(MONDAY + DAY + 12 * 3_600_000),
    end: iso(MONDAY + DAY + 14 * 3_600_000)
  })
  const solo = await s.services.create({
    name: "Solo",
    duration_minutes: 45,
    buffer_before_minutes: 10,
    buffer_after_minutes: 5,
    slot_interval_minutes: 15,
    staff_ids: staff,
    max_advance_days: 60
  })
  const group = await s.services.create({ name: "Group", duration_minutes: 60, capacity: 2, staff_ids: staff, max_advance_days: 60 })
  const client = await s.clients.create({ name: "C" })
  const booked: Array<string> = []
  for (let i = 0; i < 24; i++) {
    const service = i % 3 === 0 ? group.id : solo.id
    const slots = (await s.availability.slots({ service_id: service, start: iso(MONDAY), end: iso(MONDAY + 5 * DAY) })).data
    const slot = slots[(i * 37) % slots.length]!
    await s.bookings.create({ service_id: service, staff_id: slot.staff_id, client_id: client.id, start: slot.start })
    booked.push(slot.start)
  }
  const firstFree = (await s.availability.slots({ service_id: solo.id, start: iso(MONDAY + 2 * DAY), end: iso(MONDAY + 3 * DAY) })).data[0]!
  await s.availability.hold({ service_id: solo.id, staff_id: firstFree.staff_id, start: firstFree.start })
  await s.staff.update(staff[3]!, { active: false })
  const week = { start: iso(MONDAY), end: iso(MONDAY + 7 * DAY) }
  const strip = (slots: ReadonlyArray<{ start: string; end: string; staff_id: string; remaining: number }>) =>
    slots.map((x) => [x.start, x.end, staff.indexOf(x.staff_id), x.remaining])
  const explain = async (staffId: string, start: string) => {
    const { reasons, bookable } = await s.availability.explain({ service_id: solo.id, staff_id: staffId, start })
    return { bookable, codes: reasons.map((r) => r.code) }
  }
  return {
    solo: strip((await s.availability.slots({ service_id: solo.id, ...week })).data),
    group: strip((await s.availability.slots({ service_id: group.id, ...week })).data),
    named: strip((await s.availability.slots({ service_id: solo.id, staff_id: staff[1]!, ...week })).data),
    inactive: (await s.availability.slots({ service_id: solo.id, staff_id: staff[3]!, ...week })).data.length,
    explained: [
      await explain(firstFree.staff_id, firstFree.start),
      await explain(staff[1]!, iso(MONDAY + DAY + 12 * 3_600_000)),
      await explain(staff[3]!, booked[0]!),
      ...await Promise.all(booked.slice(0, 6).map((start, k) => explain(staff[k % 3]!, start)))
    ],
    missing: [
      await failure(
        s.availability.slots({ service_id: "svc_00000000000000000000000000", staff_id: "stf_00000000000000000000000000", ...week })
      ),
      await failure(s.availability.slots({ service_id: solo.id, staff_id: "stf_00000000000000000000000000", ...week })),
      await failure(
        s.availability.explain({
          service_id: "svc_00000000000000000000000000",
          staff_id: "stf_00000000000000000000000000",
          start: week.start
        })
      )
    ].map((error) =>
      (error as { code?: string; errors?: ReadonlyArray<{ path: string }> } | undefined) === undefined
        ? "none"
        : `${(error as { code: string }).code} ${
          (error as { errors?: ReadonlyArray<{ path: string }> }).errors?.map((e) => e.path).join(",")
        }`
    )
  }
}

describe("slots on PostgreSQL", () => {
  it("list and explain what the memory store does, with reads issued together", async () => {
    const memory = await createScheduling({ storage: "memory" })
    const postgres = await postgresScheduling({ url: database.url, schema: "agree", maxConnections: 5 })
    const [a, b] = [await build(memory), await build(postgres)]
    expect(a.solo.length).toBeGreaterThan(100)
    expect(a.group.some((slot) => slot[3] === 1)).toBe(true)
    expect(a.solo.some((slot) => slot[2] === 3)).toBe(false)
    expect(a.inactive).toBe(0)
    expect(a.explained[0]!.codes).toContain("held")
    expect(a.explained[2]!.codes).toContain("staff_inactive")
    expect(a.missing).toEqual(["invalid_reference service_id", "invalid_reference staff_id", "invalid_reference service_id"])
    expect(b).toEqual(a)
    await memory.close()
    await postgres.close()
  }, 120_000)
})
