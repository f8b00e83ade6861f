/**
 * The widget's flow as data: one immutable `State`, whose `step` carries what only that step
 * has (the held time on the details step, the booking once done), changed only by
 * `transition(state, action)`. No DOM, no network, no clock: the widget performs the side
 * effects (API calls, timers, focus, announcements) and reports what came of them as actions.
 */
import type { Booking, Hold, ManagedBooking, Service, Slot, StaffMember, WidgetConfig } from "./api.js"
import { ANY, type Field, FIELDS, type Prefill } from "./options.js"
import { civil, dateKey, type YearMonth } from "./time.js"

/** A time that could not be booked (a series' blocked date), and why. */
export interface Blocked {
  readonly start: string
  readonly reason: string
}

export type AnswerValue = string | boolean | ReadonlyArray<string>

export interface Problem {
  readonly code: string
  readonly message: string
  readonly retry?: (() => void) | undefined
}

export type Step =
  | { readonly _tag: "loading" }
  | { readonly _tag: "fatal" }
  | { readonly _tag: "service" }
  | { readonly _tag: "staff" }
  | { readonly _tag: "date" }
  /** A time picked: held for the visitor (`hold`), or unheld when the API holds no more for them. */
  | { readonly _tag: "details"; readonly slot: Slot; readonly hold: Hold | undefined }
  /** A series' first booking is `booking`; `occurrences` lists every booked one, `skipped` the rest. */
  | {
    readonly _tag: "done"
    readonly booking: Booking
    readonly occurrences: ReadonlyArray<Booking>
    readonly skipped: ReadonlyArray<Blocked>
  }
  | { readonly _tag: "manage" }
  | { readonly _tag: "cancel" }
  /** Manage mode: the new time picked for the booking, to confirm. */
  | { readonly _tag: "move"; readonly slot: Slot }

export type StepName = Step["_tag"]

/** What the visitor typed and chose on the details step, and what is wrong with it. */
export interface Form {
  readonly fields: Readonly<Record<Field, string>>
  readonly fieldErrors: Partial<Record<Field, string>>
  /** Answers to the service's questions, and what is wrong with them, by question id. */
  readonly answers: Readonly<Record<string, AnswerValue>>
  readonly answerErrors: Readonly<Record<string, string>>
  /** Every `repeatWeeks` weeks (0: once), `repeatCount` times as typed. */
  readonly repeatWeeks: number
  readonly repeatCount: string
  readonly repeatError: string | undefined
  /** A refused series' blocked dates. */
  readonly blocked: ReadonlyArray<Blocked>
}

export interface State {
  readonly step: Step
  readonly config: WidgetConfig | undefined
  readonly services: ReadonlyArray<Service>
  readonly service: Service | undefined
  readonly staffList: ReadonlyArray<StaffMember>
  readonly staffChoice: string
  readonly zone: string
  readonly month: YearMonth
  readonly monthSlots: ReadonlyArray<Slot> | undefined
  readonly day: string | undefined
  readonly focusDay: string | undefined
  readonly focusTime: number
  /** A taken time's message, and the API's alternatives to it. */
  readonly notice: string | undefined
  readonly alternatives: ReadonlyArray<Slot>
  readonly problem: Problem | undefined
  /** What the widget waits on (loading, holding, booking, a rate limit), shown as a status line. */
  readonly busy: string | undefined
  readonly form: Form
  /** The idempotency key of the next booking attempt. */
  readonly bookingKey: string
  /** Manage mode: the booking the manage link opened, and what the last action did. */
  readonly managed: ManagedBooking | undefined
  readonly manageNote: string | undefined
}

export type Action =
  /** Options that pick another account, service or staff member: the flow starts over. */
  | { readonly _tag: "Restarted"; readonly prefill: Prefill | undefined }
  | { readonly _tag: "Prefilled"; readonly prefill: Prefill | undefined; readonly overwrite: boolean }
  /** Waiting on the API; `keep` leaves a message already shown (a rate limit's wait) in place. */
  | { readonly _tag: "Busy"; readonly text: string; readonly keep?: boolean }
  | { readonly _tag: "ConfigLoaded"; readonly config: WidgetConfig }
  | { readonly _tag: "ServicesLoaded"; readonly services: ReadonlyArray<Service> }
  | { readonly _tag: "ServiceChosen"; readonly service: Service }
  | { readonly _tag: "StaffLoaded"; readonly staff: ReadonlyArray<StaffMember> }
  | { readonly _tag: "StaffChosen"; readonly staff: string }
  /** Steps that carry no data of their own; leaving the details step this way lets go of its time. */
  | { readonly _tag: "Shown"; readonly step: "service" | "staff" | "date" | "manage" | "cancel" }
  /** The calendar opened on `month` with its slots; the first free day is picked. */
  | { readonly _tag: "DateEntered"; readonly month: YearMonth; readonly slots: ReadonlyArray<Slot> }
  | { readonly _tag: "MonthRequested"; readonly month: YearMonth; readonly text: string }
  /** A month's slots arrived; `focusDay`: the day arrow keys carried focus to. */
  | { readonly _tag: "MonthShown"; readonly slots: ReadonlyArray<Slot>; readonly focusDay?: string | undefined }
  | { readonly _tag: "DayFocused"; readonly day: string }
  | { readonly _tag: "DayPicked"; readonly day: string }
  | { readonly _tag: "TimeFocused"; readonly index: number }
  | { readonly _tag: "ZoneChanged"; readonly zone: string }
  /** A time is being held (or a booking sent): `text` says so. */
  | { readonly _tag: "Holding"; readonly text: string }
  | { readonly _tag: "Held"; readonly slot: Slot; readonly hold: Hold | undefined }
  /** The renewal of `from` came back as `to` (undefined: the time is no longer held). */
  | { readonly _tag: "HoldRenewed"; readonly from: Hold; readonly to: Hold | undefined }
  | { readonly _tag: "HoldReleased" }
  /** The time went to someone else: back to the times, refreshed when `slots` came. */
  | {
    readonly _tag: "Taken"
    readonly notice: string
    readonly alternatives: ReadonlyArray<Slot>
    readonly slots: ReadonlyArray<Slot> | undefined
  }
  /** The details step's back link. */
  | { readonly _tag: "Back" }
  | { readonly _tag: "FieldEdited"; readonly field: Field; readonly value: string }
  | { readonly _tag: "AnswerEdited"; readonly id: string; readonly value: AnswerValue }
  | { readonly _tag: "RepeatChosen"; readonly weeks: number; readonly count: string }
  | { readonly _tag: "RepeatCountTyped"; readonly count: string }
  /** The form's errors as checked here, or as the API refused them (`merge`: on top of the ones shown). */
  | {
    readonly _tag: "Checked"
    readonly fieldErrors: Partial<Record<Field, string>>
    readonly answerErrors: Readonly<Record<string, string>>
    readonly repeatError?: string | undefined
    readonly merge?: boolean
  }
  | { readonly _tag: "SeriesBlocked"; readonly blocked: ReadonlyArray<Blocked> }
  | { readonly _tag: "KeyUsed"; readonly next: string }
  | {
    readonly _tag: "Booked"
    readonly booking: Booking
    readonly occurrences: ReadonlyArray<Booking>
    readonly skipped: ReadonlyArray<Blocked>
    readonly next: string
  }
  | { readonly _tag: "Failed"; readonly problem: Problem }
  | { readonly _tag: "Fatal"; readonly problem: Problem }
  | { readonly _tag: "ProblemCleared" }
  | {
    readonly _tag: "ManagedShown"
    readonly managed: ManagedBooking
    readonly zone: string | undefined
    readonly note: string | undefined
  }
  | { readonly _tag: "NoteCleared" }
  | { readonly _tag: "MoveChosen"; readonly slot: Slot }

const EMPTY_FIELDS: Record<Field, string> = { name: "", email: "", phone: "", notes: "" }

const emptyForm: Form = {
  fields: EMPTY_FIELDS,
  fieldErrors: {},
  answers: {},
  answerErrors: {},
  repeatWeeks: 0,
  repeatCount: "4",
  repeatError: undefined,
  blocked: []
}

export const initialState = (zone: string, bookingKey: string, prefill?: Prefill): State => ({
  step: { _tag: "loading" },
  config: undefined,
  services: [],
  service: undefined,
  staffList: [],
  staffChoice: ANY,
  zone,
  month: { year: 1970, month: 1 },
  monthSlots: undefined,
  day: undefined,
  focusDay: undefined,
  focusTime: 0,
  notice: undefined,
  alternatives: [],
  problem: undefined,
  busy: undefined,
  form: { ...emptyForm, fields: prefilled(EMPTY_FIELDS, prefill, false) },
  bookingKey,
  managed: undefined,
  manageNote: undefined
})

const prefilled = (fields: Readonly<Record<Field, string>>, prefill: Prefill | undefined, overwrite: boolean): Record<Field, string> => {
  const next = { ...fields }
  for (const field of FIELDS) {
    const value = prefill?.[field]
    if (value !== undefined && (overwrite || next[field] === "")) next[field] = String(value)
  }
  return next
}

// ---------------------------------------------------------------- days

const dayIndex = new WeakMap<ReadonlyArray<Slot>, { readonly zone: string; readonly days: Map<string, string> }>()

/** The local day of a slot in `zone`, kept per slot list and zone: a calendar asks for each slot often. */
const dayOf = (slots: ReadonlyArray<Slot>, zone: string, slot: Slot): string => {
  let index = dayIndex.get(slots)
  if (index === undefined || index.zone !== zone) {
    index = { zone, days: new Map() }
    dayIndex.set(slots, index)
  }
  let day = index.days.get(slot.start)
  if (day === undefined) {
    day = dateKey(Date.parse(slot.start), zone)
    index.days.set(slot.start, day)
  }
  return day
}

/** The days of `month` with a free time, in `zone`. */
export const daysWithSlots = (zone: string, slots: ReadonlyArray<Slot>, month: YearMonth): Set<string> => {
  const prefix = civil(month.year, month.month, 1).slice(0, 8)
  const days = new Set<string>()
  for (const slot of slots) {
    const key = dayOf(slots, zone, slot)
    if (key.startsWith(prefix)) days.add(key)
  }
  return days
}

/** The day's free starts, one per start (the first staff member's when "anyone"). */
export const slotsOn = (s: Pick<State, "monthSlots" | "zone">, day: string): Array<Slot> => {
  const slots = s.monthSlots ?? []
  const seen = new Set<string>()
  const out: Array<Slot> = []
  for (const slot of slots) {
    if (seen.has(slot.start) || dayOf(slots, s.zone, slot) !== day) continue
    seen.add(slot.start)
    out.push(slot)
  }
  return out.sort((a, b) => a.start.localeCompare(b.start))
}

/** The month's first day with a free time, picked, with focus there (or on the 1st). */
const firstDay = (s: State): State => {
  const days = [...daysWithSlots(s.zone, s.monthSlots ?? [], s.month)].sort()
  return { ...s, day: days[0], focusDay: days[0] ?? civil(s.month.year, s.month.month, 1), focusTime: 0 }
}

// ---------------------------------------------------------------- staff

/**
 * Who the visitor books with, once the service is known: a staff id (`ANY` lets the API
 * choose), `"ask"` for the staff step, or the `unknown` staff option that names nobody of
 * the service. A team service needs no staff step: the server assigns, or everyone attends.
 */
export const staffFor = (service: Service, option: string | undefined): string | "ask" | { readonly unknown: string } => {
  const assignment = service.assignment
  // A round-robin service's rotation decides: the API refuses a member named with a publishable key.
  if (assignment === "collective" || assignment === "round_robin") return ANY
  if (option !== undefined && option !== ANY) return service.staff_ids.includes(option) ? option : { unknown: option }
  if (option === ANY || service.staff_ids.length <= 1) return ANY
  return "ask"
}

/** Whether the server picks the attendees: on a round-robin or a collective service. */
export const teamBooking = (s: Pick<State, "service" | "staffChoice">): boolean => {
  const assignment = s.service?.assignment
  return assignment === "collective" || assignment === "round_robin"
}

// ---------------------------------------------------------------- reading

/** The time the current step is about: the picked one on the details step, the new one on a move. */
export const slotOf = (s: State): Slot | undefined => s.step._tag === "details" || s.step._tag === "move" ? s.step.slot : undefined

export const holdOf = (s: State): Hold | undefined => (s.step._tag === "details" ? s.step.hold : undefined)

// ---------------------------------------------------------------- transition

const form = (s: State, change: Partial<Form>): State => ({ ...s, form: { ...s.form, ...change } })

const to = (s: State, step: Step): State => ({ ...s, step, busy: undefined })

export const transition = (s: State, a: Action): State => {
  switch (a._tag) {
    case "Restarted":
      return {
        ...s,
        step: { _tag: "loading" },
        config: undefined,
        problem: undefined,
        notice: undefined,
        alternatives: [],
        managed: undefined,
        form: {
          ...s.form,
          fields: prefilled(s.form.fields, a.prefill, false),
          fieldErrors: {},
          answers: {},
          answerErrors: {},
          repeatWeeks: 0,
          blocked: []
        }
      }
    case "Prefilled":
      return form(s, { fields: prefilled(s.form.fields, a.prefill, a.overwrite) })
    case "Busy":
      return { ...s, busy: a.keep === true ? s.busy ?? a.text : a.text }
    case "ConfigLoaded":
      return { ...s, config: a.config }
    case "ServicesLoaded":
      return { ...s, services: a.services }
    case "ServiceChosen":
      return form({ ...s, service: a.service, monthSlots: undefined, staffList: [] }, { repeatWeeks: 0, blocked: [] })
    case "StaffLoaded":
      return to({ ...s, staffList: a.staff }, { _tag: "staff" })
    case "StaffChosen":
      return { ...s, staffChoice: a.staff, monthSlots: undefined }
    case "Shown":
      return to(s, { _tag: a.step })
    case "DateEntered":
      return to(firstDay({ ...s, month: a.month, monthSlots: a.slots }), { _tag: "date" })
    case "MonthRequested":
      return { ...s, month: a.month, monthSlots: undefined, busy: s.busy ?? a.text }
    case "MonthShown": {
      const shown = { ...s, monthSlots: a.slots, busy: undefined }
      if (a.focusDay === undefined) return firstDay(shown)
      const free = daysWithSlots(s.zone, a.slots, s.month).has(a.focusDay)
      return { ...shown, focusDay: a.focusDay, day: free ? a.focusDay : s.day }
    }
    case "DayFocused":
      return { ...s, focusDay: a.day }
    case "DayPicked":
      return { ...s, focusDay: a.day, day: a.day, focusTime: 0, notice: undefined }
    case "TimeFocused":
      return { ...s, focusTime: a.index }
    case "ZoneChanged": {
      const zoned = { ...s, zone: a.zone }
      // The chosen day stays when it still has times in the new zone.
      return zoned.day === undefined || slotsOn(zoned, zoned.day).length === 0 ? firstDay(zoned) : zoned
    }
    case "Holding":
      return { ...s, problem: undefined, notice: undefined, busy: a.text }
    case "Held":
      return to({ ...s, alternatives: [] }, { _tag: "details", slot: a.slot, hold: a.hold })
    case "HoldRenewed":
      return s.step._tag === "details" && s.step.hold?.id === a.from.id ? { ...s, step: { ...s.step, hold: a.to } } : s
    case "HoldReleased":
      return s.step._tag === "details" ? { ...s, step: { ...s.step, hold: undefined } } : s
    case "Taken": {
      const back = to({ ...s, notice: a.notice, alternatives: a.alternatives, monthSlots: a.slots ?? s.monthSlots }, { _tag: "date" })
      return back.day !== undefined && slotsOn(back, back.day).length === 0 ? firstDay(back) : back
    }
    case "Back":
      return to({ ...s, problem: undefined }, { _tag: "date" })
    case "FieldEdited":
      return form(s, { fields: { ...s.form.fields, [a.field]: a.value } })
    case "AnswerEdited":
      return form(s, { answers: { ...s.form.answers, [a.id]: a.value } })
    case "RepeatChosen":
      return form(s, { repeatWeeks: a.weeks, repeatCount: a.count, blocked: [] })
    case "RepeatCountTyped":
      // Blocked dates of another count no longer apply.
      return form(s, { repeatCount: a.count, blocked: [] })
    case "Checked":
      return form(
        s,
        a.merge === true
          ? { fieldErrors: { ...s.form.fieldErrors, ...a.fieldErrors }, answerErrors: { ...s.form.answerErrors, ...a.answerErrors } }
          : { fieldErrors: a.fieldErrors, answerErrors: a.answerErrors, repeatError: a.repeatError }
      )
    case "SeriesBlocked":
      return form({ ...s, busy: undefined }, { blocked: a.blocked })
    case "KeyUsed":
      return { ...s, bookingKey: a.next }
    case "Booked":
      return to(
        form({ ...s, bookingKey: a.next }, { blocked: [], answers: {}, answerErrors: {} }),
        { _tag: "done", booking: a.booking, occurrences: a.occurrences, skipped: a.skipped }
      )
    case "Failed":
      return { ...s, busy: undefined, problem: a.problem }
    case "Fatal":
      return to({ ...s, problem: a.problem }, { _tag: "fatal" })
    case "ProblemCleared":
      return { ...s, problem: undefined }
    case "ManagedShown":
      return to({ ...s, managed: a.managed, zone: a.zone ?? s.zone, manageNote: a.note }, { _tag: "manage" })
    case "NoteCleared":
      return { ...s, manageNote: undefined }
    case "MoveChosen":
      return to({ ...s, problem: undefined }, { _tag: "move", slot: a.slot })
  }
}
