/** A small, realistic tenant: one salon with a stylist, a haircut service and weekday hours. */
import { createTestScheduling, type TestScheduling } from "../../index.js"

/** Friday 2027-03-26 09:00 in Berlin (CET, UTC+1); Monday 2027-03-29 is after the DST change (CEST, UTC+2). */
export const NOW = "2027-03-26T08:00:00Z"
/** Monday 2027-03-29 09:00 Europe/Berlin. */
export const MONDAY_9 = "2027-03-29T07:00:00Z"

export const at = (instant: string, minutes: number): string =>
  new Date(Date.parse(instant) + minutes * 60_000).toISOString().replace(".000Z", "Z")

export interface Salon {
  readonly s: TestScheduling
  readonly staffId: string
  readonly serviceId: string
  readonly clientId: string
}

export const salon = async (
  service: Record<string, unknown> = {},
  s?: TestScheduling
): Promise<Salon> => {
  const sched = s ?? await createTestScheduling({ now: NOW })
  const staff = await sched.staff.create({ name: "Ana", time_zone: "Europe/Berlin" })
  await sched.availability.create({
    staff_id: staff.id,
    type: "weekly",
    weekdays: [1, 2, 3, 4, 5],
    start_time: "09:00",
    end_time: "17:00"
  })
  const created = await sched.services.create({
    name: "Haircut",
    duration_minutes: 30,
    staff_ids: [staff.id],
    price: { amount: 4000, currency: "EUR" },
    ...service
  })
  const client = await sched.clients.create({ name: "Bo", email: "bo@example.com" })
  return { s: sched, staffId: staff.id, serviceId: created.id, clientId: client.id }
}

/** A library error as a plain object of the fields tests look at. */
export const fieldsOf = (error: unknown) => {
  const e = error as Record<string, unknown>
  return {
    code: e.code,
    status: e.status,
    errors: e.errors,
    alternatives: e.alternatives,
    reasons: e.reasons,
    name: e.name,
    detail: e.detail
  }
}

/** Rejection of `promise` as a plain object of the fields tests look at. */
export const failure = async (promise: Promise<unknown>) => {
  try {
    await promise
  } catch (error) {
    return fieldsOf(error)
  }
  throw new Error("expected the call to fail, it succeeded")
}
