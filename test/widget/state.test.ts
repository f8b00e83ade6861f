/**
 * The widget's flow as a pure function, without a browser: what each step carries, what
 * leaving it drops, and where a refusal sends the visitor. The browser suites beside this
 * one drive the same transitions through real clicks.
 */
import { describe, expect, it } from "vitest"
import type { Booking, Hold, Service, Slot } from "../../widget/api.js"
import { ANY } from "../../widget/options.js"
import {
  type Action,
  daysWithSlots,
  holdOf,
  initialState,
  slotOf,
  slotsOn,
  staffFor,
  type State,
  teamBooking,
  transition
} from "../../widget/state.js"

const slot = (start: string, staff_id = "stf_a"): Slot => ({
  start,
  end: new Date(Date.parse(start) + 30 * 60_000).toISOString(),
  staff_id,
  staff_ids: [staff_id],
  remaining: 1
})

const hold = (id: string): Hold => ({ id, start: "2031-05-06T09:00:00Z" } as unknown as Hold)

const service = (
  assignment: Service["assignment"],
  staff_ids: ReadonlyArray<string>
): Service => ({ id: "svc_1", name: "Haircut", duration_minutes: 30, staff_ids, assignment } as unknown as Service)

const MAY = { year: 2031, month: 5 }
const nine = slot("2031-05-06T09:00:00Z")
const ten = slot("2031-05-06T10:00:00Z")
const later = slot("2031-05-20T09:00:00Z")
/** 23:30 UTC: the 8th in UTC, already the 9th in Tokyo. */
const lateEvening = slot("2031-05-08T23:30:00Z")

const run = (state: State, ...actions: ReadonlyArray<Action>): State => actions.reduce(transition, state)

const start = (): State => initialState("UTC", "key-1")

/** A visitor on the calendar of May with these slots. */
const onCalendar = (slots: ReadonlyArray<Slot> = [nine, ten, later]): State =>
  run(start(), { _tag: "ServiceChosen", service: service("chosen", ["stf_a"]) }, { _tag: "DateEntered", month: MAY, slots })

/** The same visitor on the details step with `nine` held as `h1`. */
const onDetails = (): State => run(onCalendar(), { _tag: "Holding", text: "Holding 9:00…" }, { _tag: "Held", slot: nine, hold: hold("h1") })

describe("the widget's flow", () => {
  it("opens the calendar on the month's first free day, with the first time in focus", () => {
    const s = onCalendar([later, nine])
    expect(s.step).toEqual({ _tag: "date" })
    expect(s.day).toBe("2031-05-06")
    expect(s.focusDay).toBe("2031-05-06")
    expect(s.focusTime).toBe(0)
    // An empty month: no day chosen, focus on its first day.
    const empty = onCalendar([])
    expect(empty.day).toBeUndefined()
    expect(empty.focusDay).toBe("2031-05-01")
  })

  it("a held time lives on the details step; going back lets go of it and of any problem", () => {
    const details = run(onDetails(), { _tag: "Failed", problem: { code: "network_error", message: "offline" } })
    expect(details.step).toEqual({ _tag: "details", slot: nine, hold: hold("h1") })
    expect(details.busy).toBeUndefined()
    const back = transition(details, { _tag: "Back" })
    expect(back.step).toEqual({ _tag: "date" })
    expect(holdOf(back)).toBeUndefined()
    expect(slotOf(back)).toBeUndefined()
    expect(back.problem).toBeUndefined()
    // The day the visitor was on stays.
    expect(back.day).toBe("2031-05-06")
  })

  it("any step without data of its own drops the hold: none survives outside the details step", () => {
    for (const step of ["service", "staff", "date", "manage", "cancel"] as const) {
      expect(holdOf(transition(onDetails(), { _tag: "Shown", step }))).toBeUndefined()
    }
  })

  it("a renewal that comes back after the visitor let go of the time does not hold it again", () => {
    const renewed = transition(onDetails(), { _tag: "HoldRenewed", from: hold("h1"), to: hold("h2") })
    expect(holdOf(renewed)?.id).toBe("h2")
    const released = transition(onDetails(), { _tag: "HoldReleased" })
    expect(released.step).toEqual({ _tag: "details", slot: nine, hold: undefined })
    // h1 is no longer the held one: neither its renewal nor its loss changes anything.
    const stale = transition(renewed, { _tag: "HoldRenewed", from: hold("h1"), to: hold("h3") })
    expect(holdOf(stale)?.id).toBe("h2")
    expect(transition(onCalendar(), { _tag: "HoldRenewed", from: hold("h1"), to: hold("h3") }).step).toEqual({ _tag: "date" })
    // A failed renewal of the current hold leaves the time unheld, still picked.
    const lost = transition(renewed, { _tag: "HoldRenewed", from: hold("h2"), to: undefined })
    expect(lost.step).toEqual({ _tag: "details", slot: nine, hold: undefined })
  })

  it("a time taken (409) returns to the times with the message and the alternatives, on fresh slots", () => {
    const booking = run(onDetails(), { _tag: "Holding", text: "Booking…" })
    expect(booking.busy).toBe("Booking…")
    const taken = transition(booking, { _tag: "Taken", notice: "That time was just taken.", alternatives: [ten], slots: [ten, later] })
    expect(taken.step).toEqual({ _tag: "date" })
    expect(holdOf(taken)).toBeUndefined()
    expect(taken.notice).toBe("That time was just taken.")
    expect(taken.alternatives).toEqual([ten])
    expect(taken.busy).toBeUndefined()
    expect(taken.monthSlots).toEqual([ten, later])
    // The 6th still has a free time: the visitor stays on it.
    expect(taken.day).toBe("2031-05-06")
    // Picking a day puts the notice away; a new hold takes the alternatives with it.
    expect(transition(taken, { _tag: "DayPicked", day: "2031-05-20" }).notice).toBeUndefined()
    expect(transition(taken, { _tag: "Held", slot: ten, hold: hold("h2") }).alternatives).toEqual([])
  })

  it("a time taken on a day with nothing left moves to the first free day; without fresh slots the old ones stay", () => {
    const taken = transition(onDetails(), { _tag: "Taken", notice: "Taken", alternatives: [], slots: [later] })
    expect(taken.day).toBe("2031-05-20")
    expect(taken.focusDay).toBe("2031-05-20")
    const stale = transition(onDetails(), { _tag: "Taken", notice: "Taken", alternatives: [], slots: undefined })
    expect(stale.monthSlots).toEqual([nine, ten, later])
    expect(stale.day).toBe("2031-05-06")
  })

  it("a booking: the done step carries it; answers and blocked dates go, the visitor's details stay, the key is new", () => {
    const typed = run(
      onDetails(),
      { _tag: "FieldEdited", field: "name", value: "Ada" },
      { _tag: "AnswerEdited", id: "q1", value: "yes" },
      { _tag: "SeriesBlocked", blocked: [{ start: later.start, reason: "held" }] },
      { _tag: "Holding", text: "Booking…" }
    )
    expect(typed.form.blocked).toHaveLength(1)
    const booked = { id: "bkg_1", start: nine.start } as unknown as Booking
    const done = transition(typed, { _tag: "Booked", booking: booked, occurrences: [], skipped: [], next: "key-2" })
    expect(done.step).toEqual({ _tag: "done", booking: booked, occurrences: [], skipped: [] })
    expect(done.busy).toBeUndefined()
    expect(done.form.answers).toEqual({})
    expect(done.form.blocked).toEqual([])
    expect(done.form.fields.name).toBe("Ada")
    expect(done.bookingKey).toBe("key-2")
    expect(holdOf(done)).toBeUndefined()
  })

  it("another repeat choice or count clears a refused series' blocked dates", () => {
    const blocked = transition(onDetails(), { _tag: "SeriesBlocked", blocked: [{ start: later.start, reason: "held" }] })
    expect(blocked.busy).toBeUndefined()
    expect(transition(blocked, { _tag: "RepeatChosen", weeks: 2, count: "4" }).form).toMatchObject({
      repeatWeeks: 2,
      repeatCount: "4",
      blocked: []
    })
    expect(transition(blocked, { _tag: "RepeatCountTyped", count: "3" }).form).toMatchObject({ repeatCount: "3", blocked: [] })
  })

  it("errors checked here replace the shown ones; the API's refusals are added to them", () => {
    const checked = transition(onDetails(), {
      _tag: "Checked",
      fieldErrors: { email: "bad" },
      answerErrors: { q1: "missing" },
      repeatError: "count"
    })
    expect(checked.form).toMatchObject({ fieldErrors: { email: "bad" }, answerErrors: { q1: "missing" }, repeatError: "count" })
    const refused = transition(checked, { _tag: "Checked", fieldErrors: { phone: "refused" }, answerErrors: {}, merge: true })
    expect(refused.form.fieldErrors).toEqual({ email: "bad", phone: "refused" })
    expect(refused.form.answerErrors).toEqual({ q1: "missing" })
    expect(transition(refused, { _tag: "Checked", fieldErrors: {}, answerErrors: {} }).form).toMatchObject({
      fieldErrors: {},
      answerErrors: {},
      repeatError: undefined
    })
  })

  it("prefill fills empty fields on a restart and overwrites only when asked", () => {
    const typed = transition(initialState("UTC", "k", { email: "pre@example.com" }), {
      _tag: "FieldEdited",
      field: "email",
      value: "typed@example.com"
    })
    expect(initialState("UTC", "k", { email: "pre@example.com" }).form.fields.email).toBe("pre@example.com")
    const restarted = transition(typed, { _tag: "Restarted", prefill: { email: "new@example.com", name: "Ada" } })
    expect(restarted.form.fields).toMatchObject({ email: "typed@example.com", name: "Ada" })
    expect(restarted.step).toEqual({ _tag: "loading" })
    expect(transition(typed, { _tag: "Prefilled", prefill: { email: "new@example.com" }, overwrite: true }).form.fields.email).toBe(
      "new@example.com"
    )
  })

  it("a restart starts over: no step data, no problem, no notice, no managed booking", () => {
    const s = run(
      onDetails(),
      { _tag: "Taken", notice: "Taken", alternatives: [ten], slots: undefined },
      { _tag: "Failed", problem: { code: "x", message: "y" } },
      { _tag: "RepeatChosen", weeks: 1, count: "4" },
      { _tag: "Restarted", prefill: undefined }
    )
    expect(s).toMatchObject({
      step: { _tag: "loading" },
      problem: undefined,
      notice: undefined,
      alternatives: [],
      config: undefined,
      managed: undefined
    })
    expect(s.form.repeatWeeks).toBe(0)
  })

  it("a rate limit's wait stays shown while a step loads; a new wait replaces it", () => {
    const waiting = transition(start(), { _tag: "Busy", text: "Trying again in 2 s…" })
    expect(transition(waiting, { _tag: "Busy", text: "Loading…", keep: true }).busy).toBe("Trying again in 2 s…")
    expect(transition(start(), { _tag: "Busy", text: "Loading…", keep: true }).busy).toBe("Loading…")
    expect(transition(waiting, { _tag: "MonthRequested", month: MAY, text: "Loading…" }).busy).toBe("Trying again in 2 s…")
    expect(transition(waiting, { _tag: "Fatal", problem: { code: "invalid_key", message: "no" } })).toMatchObject({
      step: { _tag: "fatal" },
      busy: undefined
    })
  })

  it("a time zone switch keeps the day while it has times there, else picks the new first free day", () => {
    const s = onCalendar([nine, lateEvening])
    expect(transition(s, { _tag: "ZoneChanged", zone: "Asia/Tokyo" }).day).toBe("2031-05-06")
    const onEighth = transition(onCalendar([lateEvening]), { _tag: "DayPicked", day: "2031-05-08" })
    const tokyo = transition(onEighth, { _tag: "ZoneChanged", zone: "Asia/Tokyo" })
    expect(tokyo.day).toBe("2031-05-09")
    expect(slotsOn(tokyo, "2031-05-09")).toEqual([lateEvening])
    expect(daysWithSlots("UTC", [lateEvening], MAY)).toEqual(new Set(["2031-05-08"]))
  })

  it("arrow keys across a month edge move focus to that day, choosing it only when it has times", () => {
    const june = { year: 2031, month: 6 }
    const junes = [slot("2031-06-03T09:00:00Z")]
    const requested = transition(onCalendar(), { _tag: "MonthRequested", month: june, text: "Loading…" })
    expect(requested.monthSlots).toBeUndefined()
    const quiet = transition(requested, { _tag: "MonthShown", slots: junes, focusDay: "2031-06-01" })
    expect(quiet).toMatchObject({ focusDay: "2031-06-01", day: "2031-05-06", busy: undefined })
    expect(transition(requested, { _tag: "MonthShown", slots: junes, focusDay: "2031-06-03" })).toMatchObject({
      focusDay: "2031-06-03",
      day: "2031-06-03"
    })
    // From the month buttons: the month's first free day.
    expect(transition(requested, { _tag: "MonthShown", slots: junes }).day).toBe("2031-06-03")
  })

  it("team services skip the staff step; a chosen one asks only when several members could take it", () => {
    expect(staffFor(service("collective", ["a", "b"]), undefined)).toBe(ANY)
    // A collective service books everyone, whoever the option names.
    expect(staffFor(service("collective", ["a", "b"]), "a")).toBe(ANY)
    expect(staffFor(service("round_robin", ["a", "b"]), undefined)).toBe(ANY)
    expect(staffFor(service("round_robin", ["a", "b"]), ANY)).toBe(ANY)
    // The rotation decides on a round-robin service: a publishable key may not name a member.
    expect(staffFor(service("round_robin", ["a", "b"]), "b")).toBe(ANY)
    expect(staffFor(service("chosen", ["a", "b"]), undefined)).toBe("ask")
    expect(staffFor(service(undefined, ["a", "b"]), undefined)).toBe("ask")
    expect(staffFor(service("chosen", ["a"]), undefined)).toBe(ANY)
    expect(staffFor(service("chosen", ["a", "b"]), ANY)).toBe(ANY)
    expect(staffFor(service("chosen", ["a", "b"]), "a")).toBe("a")
    expect(staffFor(service("chosen", ["a", "b"]), "zed")).toEqual({ unknown: "zed" })
  })

  it("the server assigns on a collective service and on a round-robin one, whoever is chosen", () => {
    expect(teamBooking({ service: service("collective", ["a"]), staffChoice: "a" })).toBe(true)
    expect(teamBooking({ service: service("round_robin", ["a"]), staffChoice: ANY })).toBe(true)
    expect(teamBooking({ service: service("round_robin", ["a"]), staffChoice: "a" })).toBe(true)
    expect(teamBooking({ service: service("chosen", ["a"]), staffChoice: ANY })).toBe(false)
  })

  it("choosing a service starts its calendar afresh: no slots, staff or repeat choice of the last one", () => {
    const s = run(onDetails(), { _tag: "RepeatChosen", weeks: 2, count: "4" }, { _tag: "StaffLoaded", staff: [] })
    expect(s.step).toEqual({ _tag: "staff" })
    const next = transition(s, { _tag: "ServiceChosen", service: service("chosen", ["b"]) })
    expect(next).toMatchObject({ monthSlots: undefined, staffList: [] })
    expect(next.form).toMatchObject({ repeatWeeks: 0, blocked: [] })
    expect(transition(next, { _tag: "StaffChosen", staff: "b" })).toMatchObject({ staffChoice: "b", monthSlots: undefined })
  })

  it("manage mode: a move carries its new time; the booking shown again drops it", () => {
    const managed = { id: "bkg_1", time_zone: "Europe/Berlin" } as never
    const shown = transition(start(), { _tag: "ManagedShown", managed, zone: "Europe/Berlin", note: "Moved" })
    expect(shown).toMatchObject({ step: { _tag: "manage" }, zone: "Europe/Berlin", manageNote: "Moved" })
    const move = run(shown, { _tag: "NoteCleared" }, { _tag: "Failed", problem: { code: "x", message: "y" } }, {
      _tag: "MoveChosen",
      slot: ten
    })
    expect(move).toMatchObject({ step: { _tag: "move", slot: ten }, problem: undefined, manageNote: undefined })
    expect(slotOf(move)).toBe(ten)
    expect(holdOf(move)).toBeUndefined()
    expect(slotOf(transition(move, { _tag: "ManagedShown", managed, zone: undefined, note: undefined }))).toBeUndefined()
  })
})
