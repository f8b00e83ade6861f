/**
 * The repeat choice on the details step (a service with `max_occurrences` > 0): how often and
 * how many times, sent as an RRULE in `recurrence`. A series the API refuses (409) lists each
 * blocked date with its reason in words, and offers to book only the free ones.
 */
import type { Booking } from "./api.js"
import { h } from "./dom.js"
import { dayIn, formatDay, formatTime, type Formatting } from "./format.js"
import { type Blocked, slotOf } from "./state.js"
import type { StringKey } from "./strings.js"
import { addDays } from "./time.js"
import type { WidgetHost } from "./host.js"

/** What writing dates and reasons in the visitor's words takes. */
type Words = Formatting & Pick<WidgetHost, "t">

/** What this module reads of the widget, and how it reports back. */
type Host = Pick<WidgetHost, "apply" | "body" | "focusAfter" | "formats" | "intl" | "render" | "state" | "t" | "zone">

/** The weekly intervals offered: every week up to every 4 weeks. */
const INTERVALS = [1, 2, 3, 4]
const MIN_COUNT = 2

export const maxOccurrences = (w: Pick<WidgetHost, "state">): number => Math.max(0, Math.floor(w.state.service?.max_occurrences ?? 0))

/** Whether the visitor chose to repeat (and the service allows it). */
export const repeating = (w: Pick<WidgetHost, "state">): boolean => w.state.form.repeatWeeks > 0 && maxOccurrences(w) >= MIN_COUNT

export const repeatCount = (w: Pick<WidgetHost, "state">): number | undefined => {
  const n = Number(w.state.form.repeatCount)
  return Number.isInteger(n) && n >= MIN_COUNT && n <= maxOccurrences(w) ? n : undefined
}

/** The RFC 5545 rule for the choice: weekly on the chosen time's weekday. */
export const rrule = (weeks: number, count: number): string => `FREQ=WEEKLY${weeks > 1 ? `;INTERVAL=${weeks}` : ""};COUNT=${count}`

/**
 * The blocked occurrences a refusal lists (`occurrences`) or a series skipped (`skipped`), each
 * with the code of the first check it failed.
 */
export const blockedOf = (answer: Record<string, unknown>, list: "occurrences" | "skipped"): Array<Blocked> => {
  const items = answer[list]
  return (Array.isArray(items) ? items as Array<unknown> : []).flatMap((item) => {
    if (typeof item !== "object" || item === null) return []
    const o = item as { start?: unknown; reasons?: unknown }
    if (typeof o.start !== "string") return []
    const first = Array.isArray(o.reasons) ? o.reasons[0] as { code?: unknown } | undefined : undefined
    return [{ start: o.start, reason: typeof first?.code === "string" ? first.code : "" }]
  })
}

/** The occurrences a series answer booked, or the answer itself when it is one booking. */
export const bookedOf = (answer: Record<string, unknown>): Array<Booking> => {
  const list = Array.isArray(answer.occurrences) ? answer.occurrences as Array<Record<string, unknown>> : undefined
  const items = (list ?? [answer]).filter((b) => typeof b.id === "string" && typeof b.start === "string") as Array<Booking>
  return items.sort((a, b) => a.start.localeCompare(b.start))
}

/** The API's reason codes in words; any other code gets a generic phrase. */
const REASONS: Record<string, StringKey> = {
  booking_overlap: "reason_taken",
  buffer_overlap: "reason_taken",
  capacity_full: "reason_taken",
  held: "reason_taken",
  external_busy: "reason_taken",
  outside_hours: "reason_closed",
  date_override: "reason_closed",
  blocked: "reason_away",
  min_notice: "reason_notice",
  max_advance: "reason_horizon"
}

export const reasonText = (w: Words, reason: string): string => w.t(REASONS[reason] ?? "reason_other")

/** One date of a series in the visitor's words: the day and the time. */
const when = (w: Words, start: string): string => `${formatDay(w, dayIn(w, start))}, ${formatTime(w, start)}`

export const blockedList = (w: Words, blocked: ReadonlyArray<Blocked>): HTMLElement =>
  h("ul", { class: "dates" }, blocked.map((b) => h("li", { "data-blocked": b.start }, `${when(w, b.start)}: ${reasonText(w, b.reason)}`)))

export const datesList = (w: Words, bookings: ReadonlyArray<Booking>): HTMLElement =>
  h("ul", { class: "dates" }, bookings.map((b) => h("li", { "data-occurrence": b.id }, when(w, b.start))))

/** The repeat controls: a frequency select, and the number of appointments once repeating. */
export const repeatControls = (w: Host): HTMLElement | null => {
  const max = maxOccurrences(w)
  const { repeatError, repeatWeeks } = w.state.form
  if (max < MIN_COUNT || slotOf(w.state) === undefined) return null
  const frequency = h(
    "select",
    {
      id: "r-every",
      name: "repeat",
      "data-focus": "r-every",
      onchange: (event: Event) => {
        const weeks = Number((event.target as HTMLSelectElement).value) || 0
        const count = weeks > 0 && repeatCount(w) === undefined ? String(Math.min(4, max)) : w.state.form.repeatCount
        w.apply({ _tag: "RepeatChosen", weeks, count })
        w.focusAfter = "#r-every"
        w.render()
      }
    },
    h("option", { value: "0" }, w.t("repeat_none")),
    INTERVALS.map((n) => h("option", { value: String(n) }, n === 1 ? w.t("repeat_weekly") : w.t("repeat_weeks", { n })))
  )
  frequency.value = String(repeatWeeks)
  const nodes: Array<Node | null> = [h("label", { for: "r-every" }, w.t("repeat")), frequency]
  if (repeatWeeks > 0) {
    const error = repeatError
    // Typing updates the summary in place: re-rendering here would take focus from the field.
    const summary = h("p", { class: "muted hint", id: "r-summary" }, summaryText(w))
    nodes.push(
      h("label", { for: "r-count" }, w.t("repeat_count", { max })),
      h("input", {
        id: "r-count",
        name: "count",
        type: "number",
        inputmode: "numeric",
        min: MIN_COUNT,
        max,
        step: 1,
        "data-focus": "r-count",
        "aria-invalid": error !== undefined ? "true" : null,
        "aria-describedby": error !== undefined ? "e-r-count r-summary" : "r-summary",
        value: w.state.form.repeatCount,
        oninput: (event: Event) => {
          w.apply({ _tag: "RepeatCountTyped", count: (event.target as HTMLInputElement).value })
          w.body.querySelector(".blocked")?.remove()
          summary.textContent = summaryText(w)
        }
      }),
      error === undefined ? null : h("p", { class: "field-error", id: "e-r-count" }, error),
      summary
    )
  }
  return h("div", { class: "repeat" }, nodes)
}

/** "4 appointments, the last on …", or nothing while the count is not a valid one. */
const summaryText = (w: Host): string => {
  const count = repeatCount(w)
  const slot = slotOf(w.state)
  if (count === undefined || slot === undefined) return ""
  return w.t("repeat_summary", { n: count, date: formatDay(w, addDays(dayIn(w, slot.start), 7 * w.state.form.repeatWeeks * (count - 1))) })
}

/** What is wrong with the count, if anything: the message shown at the field, as other fields' are. */
export const validateRepeat = (w: Pick<WidgetHost, "state" | "t">): string | undefined =>
  repeating(w) && repeatCount(w) === undefined ? w.t("repeat_count_invalid", { max: maxOccurrences(w) }) : undefined

/** The refused series: each blocked date and why, and a button that books only the free ones. */
export const blockedView = (w: Host, bookFree: () => void): HTMLElement | null => {
  const blocked = w.state.form.blocked
  if (blocked.length === 0) return null
  const total = repeatCount(w) ?? 0
  const free = total - blocked.length
  return h(
    "div",
    { class: "notice blocked", role: "group", "aria-labelledby": "blocked-label", tabindex: "-1" },
    h("p", { id: "blocked-label" }, h("strong", {}, w.t("blocked"))),
    blockedList(w, blocked),
    h("p", { class: "muted" }, w.t("blocked_hint")),
    free > 0
      ? h("button", { type: "button", class: "secondary", "data-focus": "book-free", onclick: bookFree }, w.t("book_free", { n: free }))
      : null
  )
}
