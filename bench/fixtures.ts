/**
 * The slot-benchmark fixture shared by the SQLite and PostgreSQL benches: a team with
 * weekday hours, bookings spread over distinct half-hours, and the month's slot query.
 */
import type { SchedulingClient } from "../library.js"

export const DAY = 86_400_000
export const HALF_HOUR = 1_800_000
export const iso = (ms: number) => new Date(ms).toISOString().replace(".000Z", "Z")
/** Monday 00:00 UTC a week or more ahead, so every slot is in the future. */
export const MONDAY = (() => {
  const d = new Date(Date.now() + 7 * DAY)
  d.setUTCHours(0, 0, 0, 0)
  return d.getTime() + ((8 - (d.getUTCDay() || 7)) % 7) * DAY
})()

/** Staff with Monday–Friday 08:00–18:00 UTC hours, one service they all deliver. */
export const team = async (s: SchedulingClient, size: number) => {
  const ids: Array<string> = []
  for (let i = 0; i < size; i++) {
    const member = await s.staff.create({ name: `Staff ${i}`, time_zone: "UTC" })
    await s.availability.create({ staff_id: member.id, type: "weekly", weekdays: [1, 2, 3, 4, 5], start_time: "08:00", end_time: "18:00" })
    ids.push(member.id)
  }
  const service = await s.services.create({ name: "Meeting", duration_minutes: 30, staff_ids: ids, max_advance_days: 400 })
  const client = await s.clients.create({ name: "Bench client" })
  return { staffIds: ids, serviceId: service.id, clientId: client.id }
}

/** Distinct weekday half-hours: staff member `i % staff`, spread over `days` days. */
export const slotStart = (i: number, staff: number, days: number) => {
  const round = Math.floor(i / staff)
  const weekday = round % Math.floor(days * 5 / 7)
  const week = Math.floor(weekday / 5)
  const dayInWeek = weekday % 5
  const halfHour = Math.floor(round / Math.floor(days * 5 / 7)) % 20
  return MONDAY + (week * 7 + dayInWeek) * DAY + 8 * 3_600_000 + halfHour * HALF_HOUR
}

/**
 * A team of `staff` with `bookings` bookings over `days` days (staff in turn), and the
 * `availability.slots` query for those days.
 */
export const seedSlotsCase = async (
  s: SchedulingClient,
  c: { readonly staff: number; readonly days: number; readonly bookings: number }
) => {
  const { clientId, serviceId, staffIds } = await team(s, c.staff)
  for (let i = 0; i < c.bookings; i++) {
    await s.bookings.create({
      service_id: serviceId,
      staff_id: staffIds[i % c.staff]!,
      client_id: clientId,
      start: iso(slotStart(i, c.staff, c.days))
    })
  }
  return { service_id: serviceId, start: iso(MONDAY), end: iso(MONDAY + c.days * DAY) }
}
