/**
 * Recurring bookings through the library: a series keeps its wall-clock time across DST,
 * all occurrences are checked and written together (reject books none, skip books the free
 * ones), the rule subset and the service's max_occurrences are enforced, and occurrences stay
 * ordinary bookings (each with its events, cancelled or moved on its own).
 */
import { describe, expect, it } from "vitest"
import { createTestScheduling, SeriesUnavailableError, type TestScheduling } from "../../index.js"
import { failure } from "../support/fixtures.js"

const localTime = (instant: string, zone: string) =>
  new Intl.DateTimeFormat("en-GB", { timeZone: zone, hour: "2-digit", minute: "2-digit", hourCycle: "h23" }).format(new Date(instant))
const localDate = (instant: string, zone: string) =>
  new Intl.DateTimeFormat("en-CA", { timeZone: zone, year: "numeric", month: "2-digit", day: "2-digit" }).format(new Date(instant))

interface Setup {
  readonly s: TestScheduling
  readonly staffId: string
  readonly serviceId: string
  readonly clientId: string
}

/** A staff member in `zone` working every day 00:00–24:00, a 60-minute service offering 52 repeats. */
const setup = async (zone: string, service: Record<string, unknown> = {}, now = "2027-01-04T00:00:00Z"): Promise<Setup> => {
  const s = await createTestScheduling({ now })
  const staff = await s.staff.create({ name: "Ana", time_zone: "UTC" })
  // The rule's zone, not the staff member's, is the series' default.
  await s.availability.create({
    staff_id: staff.id,
    type: "weekly",
    weekdays: [1, 2, 3, 4, 5, 6, 7],
    start_time: "00:00",
    end_time: "24:00",
    time_zone: zone
  })
  const created = await s.services.create({ name: "Lesson", duration_minutes: 60, staff_ids: [staff.id], max_occurrences: 52, ...service })
  const client = await s.clients.create({ name: "Bo" })
  return { s, staffId: staff.id, serviceId: created.id, clientId: client.id }
}

const request = (x: Setup, start: string, rule: string, extra: Record<string, unknown> = {}) => ({
  service_id: x.serviceId,
  staff_id: x.staffId,
  client_id: x.clientId,
  start,
  recurrence: { rule },
  ...extra
})

describe("a weekly series across DST", () => {
  const cases = [
    // Monday 09:00 local, a few weeks before each 2027 change to a few weeks after.
    { zone: "Europe/Berlin", start: "2027-03-15T08:00:00Z", change: "2027-03-28" },
    { zone: "Europe/Berlin", start: "2027-10-18T07:00:00Z", change: "2027-10-31" },
    { zone: "America/New_York", start: "2027-03-01T14:00:00Z", change: "2027-03-14" },
    { zone: "America/New_York", start: "2027-10-25T13:00:00Z", change: "2027-11-07" }
  ]
  for (const c of cases) {
    it(`${c.zone} around ${c.change}: every occurrence at 09:00 local`, async () => {
      const x = await setup(c.zone)
      const series = await x.s.bookingSeries.create(request(x, c.start, "FREQ=WEEKLY;COUNT=5"))
      expect(series).toMatchObject({ object: "booking_series", time_zone: c.zone, on_conflict: "reject", skipped: [] })
      expect(series.id).toMatch(/^ser_/)
      expect(series.occurrences).toHaveLength(5)
      expect(series.occurrences.map((b) => localTime(b.start, c.zone))).toEqual(["09:00", "09:00", "09:00", "09:00", "09:00"])
      // The UTC offset changed in the middle: the instants are not a week apart throughout.
      const gaps = series.occurrences.slice(1).map((b, i) => Date.parse(b.start) - Date.parse(series.occurrences[i]!.start))
      expect(new Set(gaps).size).toBe(2)
      for (const b of series.occurrences) expect(b).toMatchObject({ series_id: series.id, status: "confirmed", staff_id: x.staffId })
    })
  }

  it("a daily 02:30 in Berlin starts at 03:00 on the night the clocks skip 02:00–03:00", async () => {
    const x = await setup("Europe/Berlin")
    const series = await x.s.bookingSeries.create(request(x, "2027-03-26T01:30:00Z", "FREQ=DAILY;COUNT=4"))
    expect(series.occurrences.map((b) => `${localDate(b.start, "Europe/Berlin")} ${localTime(b.start, "Europe/Berlin")}`)).toEqual([
      "2027-03-26 02:30",
      "2027-03-27 02:30",
      "2027-03-28 03:00",
      "2027-03-29 02:30"
    ])
  })

  it("a daily 01:30 in New York takes the earlier 01:30 on the night of the repeated hour", async () => {
    const x = await setup("America/New_York")
    const series = await x.s.bookingSeries.create(request(x, "2027-11-06T05:30:00Z", "FREQ=DAILY;COUNT=2;INTERVAL=1"))
    // 01:30 EDT (UTC−4) on 11-07 is 05:30Z; the later 01:30 EST would be 06:30Z.
    expect(series.occurrences.map((b) => b.start)).toEqual(["2027-11-06T05:30:00Z", "2027-11-07T05:30:00Z"])
  })

  it("an explicit time_zone wins over the staff member's", async () => {
    const x = await setup("Europe/Berlin")
    const series = await x.s.bookingSeries.create({
      ...request(x, "2027-03-08T14:00:00Z", "FREQ=WEEKLY;COUNT=2"),
      recurrence: { rule: "FREQ=WEEKLY;COUNT=2", time_zone: "america/new_york" }
    })
    expect(series.time_zone).toBe("America/New_York")
    // 09:00 EST, then 09:00 EDT after 2027-03-14.
    expect(series.occurrences.map((b) => b.start)).toEqual(["2027-03-08T14:00:00Z", "2027-03-15T13:00:00Z"])
  })
})

describe("conflicts", () => {
  it("reject (the default): 409 series_unavailable listing every blocked occurrence; nothing is written", async () => {
    const x = await setup("UTC")
    const taken = [
      await x.s.bookings.create({ service_id: x.serviceId, staff_id: x.staffId, client_id: x.clientId, start: "2027-02-08T09:00:00Z" }),
      await x.s.bookings.create({ service_id: x.serviceId, staff_id: x.staffId, client_id: x.clientId, start: "2027-02-22T09:30:00Z" })
    ]
    const eventsBefore = (await x.s.events.list({ limit: 100 })).data.length
    const { client_id: _, ...withNewClient } = request(x, "2027-02-01T09:00:00Z", "FREQ=WEEKLY;COUNT=4")
    const error = await x.s.bookingSeries.create({ ...withNewClient, client: { name: "New" } }).then(
      () => expect.fail("the series was booked"),
      (e: SeriesUnavailableError) => e
    )
    expect(error).toBeInstanceOf(SeriesUnavailableError)
    expect(error).toMatchObject({ code: "series_unavailable", status: 409 })
    const occurrences = error.occurrences!
    expect(occurrences.map((o: any) => o.start)).toEqual(["2027-02-08T09:00:00Z", "2027-02-22T09:00:00Z"])
    expect(occurrences[0]!.reasons).toEqual([expect.objectContaining({ code: "booking_overlap", booking_id: taken[0]!.id })])
    expect(occurrences[1]!.reasons).toEqual([expect.objectContaining({ code: "booking_overlap", booking_id: taken[1]!.id })])
    // Not one occurrence, client or event was left behind.
    expect((await x.s.bookings.list({ limit: 100 })).data.map((b) => b.id)).toEqual(taken.map((b) => b.id))
    expect((await x.s.clients.list({ limit: 100 })).data).toHaveLength(1)
    expect((await x.s.events.list({ limit: 100 })).data).toHaveLength(eventsBefore)
  })

  it("skip: books the free occurrences and lists the skipped with their reasons", async () => {
    const x = await setup("UTC", { min_notice_minutes: 0 })
    await x.s.bookings.create({ service_id: x.serviceId, staff_id: x.staffId, client_id: x.clientId, start: "2027-02-02T09:00:00Z" })
    const series = await x.s.bookingSeries.create(request(x, "2027-02-01T09:00:00Z", "FREQ=DAILY;COUNT=4", { on_conflict: "skip" }))
    expect(series.on_conflict).toBe("skip")
    expect(series.occurrences.map((b) => b.start)).toEqual(["2027-02-01T09:00:00Z", "2027-02-03T09:00:00Z", "2027-02-04T09:00:00Z"])
    expect(series.skipped).toEqual([{ start: "2027-02-02T09:00:00Z", reasons: [expect.objectContaining({ code: "booking_overlap" })] }])
    // Each occurrence is an ordinary booking with its own booking.created.
    const created = (await x.s.events.list({ types: ["booking.created"], limit: 100 })).data
    expect(created.filter((e) => (e.data.object as any).series_id === series.id)).toHaveLength(3)
    // The stored series reads back the same.
    const read = await x.s.bookingSeries.get(series.id)
    expect(read.skipped).toEqual(series.skipped)
    expect(read.occurrences.map((b) => b.id)).toEqual(series.occurrences.map((b) => b.id))
  })

  it("skip with every occurrence blocked books nothing and answers 409", async () => {
    const x = await setup("UTC", { max_advance_days: 1 })
    const f = await failure(x.s.bookingSeries.create(request(x, "2027-02-01T09:00:00Z", "FREQ=DAILY;COUNT=2", { on_conflict: "skip" })))
    expect(f).toMatchObject({ code: "series_unavailable", status: 409 })
    expect((await x.s.bookings.list({})).data).toHaveLength(0)
  })

  it("occurrences of one series never overlap each other (buffers count)", async () => {
    const x = await setup("UTC", { duration_minutes: 60, buffer_after_minutes: 1440 })
    const f = await failure(x.s.bookingSeries.create(request(x, "2027-02-01T09:00:00Z", "FREQ=DAILY;COUNT=2")))
    expect(f).toMatchObject({ code: "series_unavailable" })
  })

  it("an occurrence outside the staff member's hours is blocked with the explain reason", async () => {
    const s = await createTestScheduling({ now: "2027-01-04T00:00:00Z" })
    const staff = await s.staff.create({ name: "Ana", time_zone: "UTC" })
    await s.availability.create({ staff_id: staff.id, type: "weekly", weekdays: [1, 2, 3, 4, 5], start_time: "09:00", end_time: "17:00" })
    const service = await s.services.create({ name: "L", duration_minutes: 60, staff_ids: [staff.id], max_occurrences: 10 })
    // Friday, Saturday, Sunday, Monday: the weekend is closed.
    const series = await s.bookingSeries.create({
      service_id: service.id,
      client: { name: "C" },
      start: "2027-02-05T09:00:00Z",
      recurrence: { rule: "FREQ=DAILY;COUNT=4" },
      on_conflict: "skip"
    })
    expect(series.staff_id).toBe(staff.id)
    expect(series.occurrences.map((b) => b.start)).toEqual(["2027-02-05T09:00:00Z", "2027-02-08T09:00:00Z"])
    expect(series.skipped.map((o) => [o.start, o.reasons[0]!.code])).toEqual([
      ["2027-02-06T09:00:00Z", "outside_hours"],
      ["2027-02-07T09:00:00Z", "outside_hours"]
    ])
  })
})

describe("the rule and the service's limit", () => {
  const refused = [
    ["FREQ=YEARLY;COUNT=2", "YEARLY"],
    ["FREQ=WEEKLY;COUNT=53", "COUNT=53"],
    ["FREQ=WEEKLY", "neither COUNT nor UNTIL"],
    ["FREQ=WEEKLY;COUNT=2;UNTIL=20270301", "both COUNT and UNTIL"],
    ["FREQ=WEEKLY;COUNT=2;BYSETPOS=1", "BYSETPOS"],
    ["FREQ=WEEKLY;BYDAY=1MO;COUNT=2", "ordinal"],
    ["FREQ=DAILY;UNTIL=20280301", "one year"],
    ["FREQ=DAILY;UNTIL=2028-03-01", "UNTIL"],
    ["FREQ=DAILY;INTERVAL=0;COUNT=2", "INTERVAL"],
    ["nonsense", "NONSENSE"]
  ] as const
  for (const [rule, words] of refused) {
    it(`${rule}: 422 naming recurrence.rule`, async () => {
      const x = await setup("UTC")
      const f = await failure(x.s.bookingSeries.create(request(x, "2027-02-01T09:00:00Z", rule)))
      expect(f).toMatchObject({ code: "validation_failed", status: 422 })
      expect(f.errors).toEqual([{ path: "recurrence.rule", message: expect.stringContaining(words) }])
      expect((f.errors as any)[0].message).toContain("allowed: FREQ=DAILY, WEEKLY or MONTHLY")
    })
  }

  it("UNTIL bounds the series, inclusive of its date", async () => {
    const x = await setup("Europe/Berlin")
    const series = await x.s.bookingSeries.create(request(x, "2027-02-01T08:00:00Z", "FREQ=WEEKLY;BYDAY=MO,TH;UNTIL=20270215"))
    expect(series.occurrences.map((b) => localDate(b.start, "Europe/Berlin"))).toEqual([
      "2027-02-01",
      "2027-02-04",
      "2027-02-08",
      "2027-02-11",
      "2027-02-15"
    ])
  })

  it("a start that is not the rule's first occurrence is refused", async () => {
    const x = await setup("UTC")
    // 2027-02-01 is a Monday.
    const f = await failure(x.s.bookingSeries.create(request(x, "2027-02-01T09:00:00Z", "FREQ=WEEKLY;BYDAY=TU;COUNT=2")))
    expect(f).toMatchObject({
      code: "validation_failed",
      errors: [{ path: "start", message: expect.stringContaining("first occurrence") }]
    })
  })

  it("max_occurrences: 0 (the default) refuses repeats; more occurrences than it allows are refused", async () => {
    const x = await setup("UTC", { max_occurrences: 0 })
    const none = await failure(x.s.bookingSeries.create(request(x, "2027-02-01T09:00:00Z", "FREQ=DAILY;COUNT=2")))
    expect(none).toMatchObject({ code: "validation_failed", errors: [{ path: "recurrence" }] })
    const plain = await x.s.services.create({ name: "P", duration_minutes: 30, staff_ids: [x.staffId] })
    expect(plain.max_occurrences).toBe(0)
    await x.s.services.update(x.serviceId, { max_occurrences: 3 })
    const many = await failure(x.s.bookingSeries.create(request(x, "2027-02-01T09:00:00Z", "FREQ=DAILY;COUNT=4")))
    expect(many).toMatchObject({
      code: "validation_failed",
      errors: [{ path: "recurrence.rule", message: expect.stringContaining("more than 3") }]
    })
    expect((await x.s.bookingSeries.create(request(x, "2027-02-01T09:00:00Z", "FREQ=DAILY;COUNT=3"))).occurrences).toHaveLength(3)
    expect(await failure(x.s.services.update(x.serviceId, { max_occurrences: 53 }))).toMatchObject({ code: "validation_failed" })
  })

  it("a single create refuses recurrence; on_conflict needs recurrence", async () => {
    const x = await setup("UTC")
    expect(await failure(x.s.bookings.create(request(x, "2027-02-01T09:00:00Z", "FREQ=DAILY;COUNT=2")))).toMatchObject({
      code: "validation_failed"
    })
    const f = await failure(
      x.s.bookings.create({
        service_id: x.serviceId,
        staff_id: x.staffId,
        client_id: x.clientId,
        start: "2027-02-01T09:00:00Z",
        on_conflict: "skip"
      })
    )
    expect(f).toMatchObject({ code: "validation_failed", errors: [{ path: "on_conflict" }] })
    const held = await failure(
      x.s.bookingSeries.create(request(x, "2027-02-01T09:00:00Z", "FREQ=DAILY;COUNT=2", { hold_id: "hld_01JQ4Z8X9V3K7M2N5P6R8T0W1Y" }))
    )
    expect(held).toMatchObject({ code: "validation_failed", errors: [{ path: "hold_id" }] })
  })

  it("without weekly hours the staff member's own time_zone is the default", async () => {
    const s = await createTestScheduling({ now: "2027-01-04T00:00:00Z" })
    const staff = await s.staff.create({ name: "Ana", time_zone: "America/New_York" })
    for (const date of ["2027-03-08", "2027-03-15"]) {
      await s.availability.create({
        staff_id: staff.id,
        type: "date",
        date,
        start_time: "08:00",
        end_time: "12:00",
        time_zone: "America/New_York"
      })
    }
    const service = await s.services.create({ name: "L", duration_minutes: 60, staff_ids: [staff.id], max_occurrences: 2 })
    const series = await s.bookingSeries.create({
      service_id: service.id,
      staff_id: staff.id,
      client: { name: "C" },
      start: "2027-03-08T14:00:00Z",
      recurrence: { rule: "FREQ=WEEKLY;COUNT=2" }
    })
    expect(series.time_zone).toBe("America/New_York")
    expect(series.occurrences.map((b) => b.start)).toEqual(["2027-03-08T14:00:00Z", "2027-03-15T13:00:00Z"])
  })
})

describe("after booking", () => {
  it("cancel from an occurrence cancels it and the later ones, each with its own event", async () => {
    const x = await setup("UTC")
    const series = await x.s.bookingSeries.create(request(x, "2027-02-01T09:00:00Z", "FREQ=WEEKLY;COUNT=4"))
    const [first, second, third, fourth] = series.occurrences
    const cancelled = await x.s.bookingSeries.cancel(series.id, { from: third!.start, reason: "moving away" })
    expect(cancelled.occurrences.map((b) => b.status)).toEqual(["confirmed", "confirmed", "cancelled", "cancelled"])
    expect(cancelled.occurrences[2]!.cancellation_reason).toBe("moving away")
    const events = (await x.s.events.list({ types: ["booking.cancelled"], limit: 100 })).data
    expect(events.map((e) => (e.data.object as any).id).sort()).toEqual([third!.id, fourth!.id].sort())
    // Cancelling all now touches only what is still active; a second call changes nothing.
    const all = await x.s.bookingSeries.cancel(series.id)
    expect(all.occurrences.every((b) => b.status === "cancelled")).toBe(true)
    expect((await x.s.events.list({ types: ["booking.cancelled"], limit: 100 })).data).toHaveLength(4)
    await x.s.bookingSeries.cancel(series.id)
    expect((await x.s.events.list({ types: ["booking.cancelled"], limit: 100 })).data).toHaveLength(4)
    expect([first, second].every((b) => b!.series_id === series.id)).toBe(true)
  })

  it("rescheduling one occurrence moves only it", async () => {
    const x = await setup("UTC")
    const series = await x.s.bookingSeries.create(request(x, "2027-02-01T09:00:00Z", "FREQ=WEEKLY;COUNT=3"))
    const moved = await x.s.bookings.reschedule(series.occurrences[1]!.id, { start: "2027-02-09T11:00:00Z" })
    expect(moved).toMatchObject({ start: "2027-02-09T11:00:00Z", series_id: series.id, rescheduled_from: "2027-02-08T09:00:00Z" })
    const read = await x.s.bookingSeries.get(series.id)
    expect(read.occurrences.map((b) => b.start)).toEqual(["2027-02-01T09:00:00Z", "2027-02-09T11:00:00Z", "2027-02-15T09:00:00Z"])
  })

  it("list pages the series by creation with their occurrences, filtered by client, staff and service", async () => {
    const x = await setup("UTC")
    const other = await x.s.clients.create({ name: "Cy" })
    const a = await x.s.bookingSeries.create(request(x, "2027-02-01T09:00:00Z", "FREQ=WEEKLY;COUNT=2"))
    const b = await x.s.bookingSeries.create(request(x, "2027-02-01T11:00:00Z", "FREQ=DAILY;COUNT=3", { client_id: other.id }))
    await x.s.bookingSeries.cancel(a.id)
    const first = await x.s.bookingSeries.list({ limit: 1 })
    expect(first).toMatchObject({ object: "list", has_more: true })
    expect(first.data).toEqual([await x.s.bookingSeries.get(a.id)])
    expect(first.data[0]!.occurrences.map((o) => o.status)).toEqual(["cancelled", "cancelled"])
    expect(await x.s.bookingSeries.list({ limit: 1, cursor: first.next_cursor! })).toEqual({
      object: "list",
      data: [b],
      has_more: false,
      next_cursor: null
    })
    expect((await x.s.bookingSeries.list({ client_id: other.id })).data.map((s) => s.id)).toEqual([b.id])
    expect((await x.s.bookingSeries.list({ staff_id: x.staffId, service_id: x.serviceId })).data.map((s) => s.id)).toEqual([a.id, b.id])
    expect(await failure(x.s.bookingSeries.list({ limit: 1, cursor: first.next_cursor!, client_id: other.id }))).toMatchObject({
      code: "bad_request",
      errors: [{ path: "cursor" }]
    })
    expect(await failure(x.s.bookingSeries.list({ staff_id: "cli_1" }))).toMatchObject({ errors: [{ path: "staff_id" }] })
  })

  it("an unknown series is not_found; a single booking has series_id null", async () => {
    const x = await setup("UTC")
    expect(await failure(x.s.bookingSeries.get("ser_01JQ4Z8X9V3K7M2N5P6R8T0W1Y"))).toMatchObject({ code: "not_found" })
    const one = await x.s.bookings.create({
      service_id: x.serviceId,
      staff_id: x.staffId,
      client_id: x.clientId,
      start: "2027-02-01T09:00:00Z"
    })
    expect(one.series_id).toBeNull()
  })
})

describe("team services", () => {
  interface Team {
    readonly s: TestScheduling
    readonly staffIds: ReadonlyArray<string>
    readonly serviceId: string
    /** A `chosen` service of the same members, to make each of them busy alone. */
    readonly soloServiceId: string
    readonly clientId: string
  }

  /** `size` members working every day 00:00–24:00 UTC, a 60-minute team service offering repeats. */
  const team = async (size: number, service: Record<string, unknown>): Promise<Team> => {
    const s = await createTestScheduling({ now: "2027-01-04T00:00:00Z" })
    const staffIds: Array<string> = []
    for (let i = 0; i < size; i++) {
      const member = await s.staff.create({ name: `Member ${i + 1}`, time_zone: "UTC" })
      await s.availability.create({
        staff_id: member.id,
        type: "weekly",
        weekdays: [1, 2, 3, 4, 5, 6, 7],
        start_time: "00:00",
        end_time: "24:00"
      })
      staffIds.push(member.id)
    }
    const created = await s.services.create({ name: "Class", duration_minutes: 60, staff_ids: staffIds, max_occurrences: 52, ...service })
    const solo = await s.services.create({ name: "Solo", duration_minutes: 60, staff_ids: staffIds })
    const client = await s.clients.create({ name: "Bo" })
    return { s, staffIds, serviceId: created.id, soloServiceId: solo.id, clientId: client.id }
  }

  /** Makes `staffId` busy alone at `start` with a booking of the other service. */
  const busy = (t: Team, staffId: string, start: string) =>
    t.s.bookings.create({ service_id: t.soloServiceId, staff_id: staffId, client_id: t.clientId, start })

  const weeklyFrom = (t: Team, start: string, count: number, extra: Record<string, unknown> = {}) =>
    t.s.bookingSeries.create({
      service_id: t.serviceId,
      client_id: t.clientId,
      start,
      recurrence: { rule: `FREQ=WEEKLY;COUNT=${count}` },
      ...extra
    })

  const WEEKS = ["2027-02-01T09:00:00Z", "2027-02-08T09:00:00Z", "2027-02-15T09:00:00Z", "2027-02-22T09:00:00Z"]

  /** The refusal of a series, with the blocked occurrences it lists. */
  const refusal = (promise: Promise<unknown>) => promise.then(() => expect.fail("the series was booked"), (e: SeriesUnavailableError) => e)

  const slotStarts = async (t: Team, day: string) =>
    (await t.s.availability.slots({ service_id: t.serviceId, start: `${day}T08:00:00Z`, end: `${day}T11:00:00Z` })).data.map((slot) =>
      slot.start
    )

  describe("collective", () => {
    it("every occurrence books every member, and occupies each of them", async () => {
      const t = await team(3, { assignment: "collective" })
      const series = await weeklyFrom(t, WEEKS[0]!, 4)
      expect(series).toMatchObject({ staff_id: t.staffIds[0], staff_ids: t.staffIds, assigned_by: "collective" })
      expect(await t.s.bookingSeries.get(series.id)).toEqual(series)
      expect(series.occurrences.map((b) => b.start)).toEqual(WEEKS)
      for (const b of series.occurrences) {
        expect(b).toMatchObject({ series_id: series.id, staff_id: t.staffIds[0], staff_ids: t.staffIds, assigned_by: "collective" })
      }
      // The third member is taken by the series at its second occurrence, though not its staff_id.
      const taken = await failure(busy(t, t.staffIds[2]!, WEEKS[1]!))
      expect(taken).toMatchObject({
        code: "slot_unavailable",
        reasons: [expect.objectContaining({ code: "booking_overlap", booking_id: series.occurrences[1]!.id })]
      })
      // Naming a member is allowed (everyone attends); naming someone else is not.
      const outsider = await t.s.staff.create({ name: "Out", time_zone: "UTC" })
      expect(await failure(weeklyFrom(t, "2027-03-01T09:00:00Z", 2, { staff_id: outsider.id }))).toMatchObject({
        code: "invalid_reference",
        errors: [{ path: "staff_id" }]
      })
      const named = await weeklyFrom(t, "2027-03-01T09:00:00Z", 2, { staff_id: t.staffIds[1] })
      expect(named.occurrences.map((b) => b.staff_ids)).toEqual([t.staffIds, t.staffIds])
    })

    it("a member busy on one date blocks that occurrence, the reasons naming them; skip books the others with everyone", async () => {
      const t = await team(2, { assignment: "collective" })
      const taken = await busy(t, t.staffIds[1]!, WEEKS[2]!)
      const error = await refusal(weeklyFrom(t, WEEKS[0]!, 4))
      expect(error).toBeInstanceOf(SeriesUnavailableError)
      expect(error).toMatchObject({ code: "series_unavailable", status: 409 })
      expect(error.occurrences).toEqual([{
        start: WEEKS[2],
        reasons: [expect.objectContaining({ code: "booking_overlap", booking_id: taken.id, staff_id: t.staffIds[1] })]
      }])
      expect((await t.s.bookings.list({ limit: 100 })).data.map((b) => b.id)).toEqual([taken.id])
      const series = await weeklyFrom(t, WEEKS[0]!, 4, { on_conflict: "skip" })
      expect(series.occurrences.map((b) => b.start)).toEqual([WEEKS[0], WEEKS[1], WEEKS[3]])
      expect(series.occurrences.every((b) => b.staff_ids.join() === t.staffIds.join())).toBe(true)
      expect(series.skipped).toEqual(error.occurrences)
    })

    it("an inactive member refuses the series as invalid_reference", async () => {
      const t = await team(2, { assignment: "collective" })
      await t.s.staff.update(t.staffIds[1]!, { active: false })
      expect(await failure(weeklyFrom(t, WEEKS[0]!, 2))).toMatchObject({ code: "invalid_reference", errors: [{ path: "staff_id" }] })
      expect((await t.s.bookings.list({})).data).toHaveLength(0)
    })

    it("cancel from an occurrence frees every member: the slots reappear and each can be booked alone", async () => {
      const t = await team(2, { assignment: "collective" })
      const series = await weeklyFrom(t, WEEKS[0]!, 3)
      for (const day of ["2027-02-08", "2027-02-15"]) expect(await slotStarts(t, day)).not.toContain(`${day}T09:00:00Z`)
      await t.s.bookingSeries.cancel(series.id, { from: WEEKS[1]! })
      expect(await slotStarts(t, "2027-02-01")).not.toContain(WEEKS[0])
      for (const day of ["2027-02-08", "2027-02-15"]) expect(await slotStarts(t, day)).toContain(`${day}T09:00:00Z`)
      // The member who is not the bookings' staff_id is free again too.
      expect(await busy(t, t.staffIds[1]!, WEEKS[1]!)).toMatchObject({ staff_id: t.staffIds[1], status: "confirmed" })
      expect(await failure(busy(t, t.staffIds[1]!, WEEKS[0]!))).toMatchObject({ code: "slot_unavailable" })
    })
  })

  describe("round robin", () => {
    it("fewest_upcoming: the member with fewer upcoming bookings of the service gets the whole series", async () => {
      const t = await team(2, { assignment: "round_robin", round_robin_policy: "fewest_upcoming" })
      const [first, second] = t.staffIds as [string, string]
      // The first member has two upcoming bookings of the service, the second one has one.
      for (const start of ["2027-03-01T09:00:00Z", "2027-03-02T09:00:00Z"]) {
        await t.s.bookings.create({ service_id: t.serviceId, staff_id: first, client_id: t.clientId, start })
      }
      await t.s.bookings.create({ service_id: t.serviceId, staff_id: second, client_id: t.clientId, start: "2027-03-03T09:00:00Z" })
      const series = await weeklyFrom(t, WEEKS[0]!, 4)
      expect(series).toMatchObject({ staff_id: second, staff_ids: [second], assigned_by: "round_robin" })
      for (const b of series.occurrences) expect(b).toMatchObject({ staff_id: second, staff_ids: [second], assigned_by: "round_robin" })
      // The series counts now: the first member has fewer upcoming, and gets the next one.
      const next = await weeklyFrom(t, "2027-04-05T09:00:00Z", 2)
      expect(next.occurrences.map((b) => [b.staff_id, b.assigned_by])).toEqual([[first, "round_robin"], [first, "round_robin"]])
    })

    it("a member free for every occurrence wins over a better-ranked one who is blocked once", async () => {
      const t = await team(2, { assignment: "round_robin" })
      const [first, second] = t.staffIds as [string, string]
      // Nobody has booked the service: the ranking follows staff_ids, the first member leads.
      await busy(t, first, WEEKS[1]!)
      const series = await weeklyFrom(t, WEEKS[0]!, 4)
      expect(series.occurrences.map((b) => b.staff_id)).toEqual([second, second, second, second])
    })

    it("nobody free for every occurrence: the member with the fewest blocked keeps the series; reject names them, skip books the rest", async () => {
      const t = await team(2, { assignment: "round_robin" })
      const [first, second] = t.staffIds as [string, string]
      const blocksFirst = await busy(t, first, WEEKS[1]!)
      await busy(t, second, WEEKS[2]!)
      await busy(t, second, WEEKS[3]!)
      const error = await refusal(weeklyFrom(t, WEEKS[0]!, 4))
      expect(error).toBeInstanceOf(SeriesUnavailableError)
      expect(error).toMatchObject({ code: "series_unavailable", status: 409 })
      expect(error.occurrences).toEqual([{
        start: WEEKS[1],
        reasons: [expect.objectContaining({ code: "booking_overlap", booking_id: blocksFirst.id, staff_id: first })]
      }])
      const series = await weeklyFrom(t, WEEKS[0]!, 4, { on_conflict: "skip" })
      expect(series.staff_id).toBe(first)
      expect(series.occurrences.map((b) => [b.start, b.staff_id, b.assigned_by])).toEqual([
        [WEEKS[0], first, "round_robin"],
        [WEEKS[2], first, "round_robin"],
        [WEEKS[3], first, "round_robin"]
      ])
      expect(series.skipped).toEqual(error.occurrences)
    })

    it("a request naming staff_id books that member, chosen", async () => {
      const t = await team(2, { assignment: "round_robin" })
      const series = await weeklyFrom(t, WEEKS[0]!, 2, { staff_id: t.staffIds[1] })
      expect(series).toMatchObject({ staff_ids: [t.staffIds[1]], assigned_by: "chosen" })
      expect(series.occurrences.map((b) => [b.staff_id, b.staff_ids, b.assigned_by])).toEqual([
        [t.staffIds[1], [t.staffIds[1]], "chosen"],
        [t.staffIds[1], [t.staffIds[1]], "chosen"]
      ])
    })
  })

  it("a chosen service without staff_id: the first member free for every occurrence, first_free", async () => {
    const t = await team(2, {})
    const [first, second] = t.staffIds as [string, string]
    const both = await weeklyFrom(t, WEEKS[0]!, 2)
    expect(both.occurrences.map((b) => [b.staff_id, b.assigned_by])).toEqual([[first, "first_free"], [first, "first_free"]])
    expect(both).toMatchObject({ staff_ids: [first], assigned_by: "first_free" })
    await busy(t, first, WEEKS[3]!)
    const later = await weeklyFrom(t, WEEKS[2]!, 2)
    expect(later.occurrences.map((b) => [b.staff_id, b.assigned_by])).toEqual([[second, "first_free"], [second, "first_free"]])
  })
})
