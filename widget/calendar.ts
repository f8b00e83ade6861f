/**
 * The month grid: days with free times, month navigation, and a roving tabindex moved by
 * arrow keys, Home/End (week) and PageUp/PageDown (month), crossing month edges.
 */
import { h } from "./dom.js"
import { fmt, formatDay, monthLabel, today } from "./format.js"
import { daysWithSlots, slotsOn } from "./state.js"
import { addDays, addMonths, addMonthsToDay, civil, daysInMonth, monthIndex, monthOf, weekday } from "./time.js"
import type { WidgetHost } from "./host.js"

/** What this module reads of the widget, and how it reports back. */
type Host = Pick<
  WidgetHost,
  "announce" | "apply" | "focusAfter" | "formats" | "intl" | "lang" | "render" | "showMonth" | "state" | "t" | "zone"
>

const firstWeekday = (w: Host): number => (w.lang === "de" ? 1 : 0)

export const calendar = (w: Host): Array<Node> => {
  const { month, monthSlots, day } = w.state
  const days = daysWithSlots(w.zone, monthSlots ?? [], month)
  const now = today(w)
  const first = civil(month.year, month.month, 1)
  const last = civil(month.year, month.month, daysInMonth(month))
  const atStart = monthIndex(month) <= monthIndex(monthOf(now))
  const focusDay = [w.state.focusDay, day].find((d) => d !== undefined && d >= first && d <= last) ?? first
  const offset = (weekday(first) - firstWeekday(w) + 7) % 7
  const headers: Array<Node> = []
  for (let i = 0; i < 7; i++) {
    const sample = addDays("2027-03-07", firstWeekday(w) + i) // a Sunday, then onwards
    const date = Date.parse(`${sample}T12:00:00Z`)
    headers.push(
      h(
        "th",
        { scope: "col", abbr: fmt(w, { timeZone: "UTC", weekday: "long" }).format(date) },
        fmt(w, { timeZone: "UTC", weekday: "short" }).format(date)
      )
    )
  }
  const rows: Array<Node> = []
  let cells: Array<Node> = []
  for (let i = 0; i < offset; i++) cells.push(h("td", {}))
  for (let d = 1; d <= daysInMonth(month); d++) {
    const key = civil(month.year, month.month, d)
    const free = days.has(key)
    cells.push(h(
      "td",
      { "aria-selected": key === day ? "true" : "false" },
      h("button", {
        type: "button",
        class: `day${free ? " free" : ""}${key === now ? " today" : ""}`,
        tabindex: key === focusDay ? "0" : "-1",
        "data-day": key,
        "data-focus": `day-${key}`,
        "aria-disabled": free ? null : "true",
        "aria-current": key === now ? "date" : null,
        "aria-label": `${formatDay(w, key)}, ${free ? w.t("times_available") : w.t("no_times_day")}`,
        onclick: () => {
          if (!free) return w.apply({ _tag: "DayFocused", day: key })
          w.apply({ _tag: "DayPicked", day: key })
          w.focusAfter = `[data-day="${key}"]`
          w.render()
          w.announce(w.t("times_count", { n: slotsOn(w.state, key).length, date: formatDay(w, key) }))
        }
      }, String(d))
    ))
    if (cells.length === 7) {
      rows.push(h("tr", {}, cells))
      cells = []
    }
  }
  if (cells.length > 0) {
    while (cells.length < 7) cells.push(h("td", {}))
    rows.push(h("tr", {}, cells))
  }
  const table = h(
    "table",
    { role: "grid", "aria-labelledby": "month", onkeydown: (e: KeyboardEvent) => calendarKey(w, e, focusDay) },
    h("thead", {}, h("tr", {}, headers)),
    h("tbody", {}, rows)
  )
  return [
    h(
      "div",
      { class: "calhead" },
      h("button", {
        type: "button",
        class: "nav",
        "data-focus": "prev",
        "aria-label": w.t("previous_month"),
        "aria-disabled": atStart ? "true" : null,
        onclick: () => atStart ? undefined : void w.showMonth(addMonths(month, -1))
      }, "‹"),
      h("strong", { id: "month", tabindex: "-1" }, monthLabel(w, month)),
      h("button", {
        type: "button",
        class: "nav",
        "data-focus": "next",
        "aria-label": w.t("next_month"),
        onclick: () => void w.showMonth(addMonths(month, 1))
      }, "›")
    ),
    table,
    ...(monthSlots !== undefined && days.size === 0 ? [h("p", { class: "muted" }, w.t("no_times_month"))] : [])
  ]
}

const calendarKey = (w: Host, event: KeyboardEvent, from: string): void => {
  const target = event.target as HTMLElement
  const current = target.getAttribute("data-day") ?? from
  const weekStart = (weekday(current) - firstWeekday(w) + 7) % 7
  const moves: Record<string, () => string> = {
    ArrowLeft: () => addDays(current, -1),
    ArrowRight: () => addDays(current, 1),
    ArrowUp: () => addDays(current, -7),
    ArrowDown: () => addDays(current, 7),
    Home: () => addDays(current, -weekStart),
    End: () => addDays(current, 6 - weekStart),
    PageUp: () => addMonthsToDay(current, -1),
    PageDown: () => addMonthsToDay(current, 1)
  }
  const move = moves[event.key]
  if (move === undefined) return
  event.preventDefault()
  const next = move()
  const nextMonth = monthOf(next)
  if (monthIndex(nextMonth) < monthIndex(monthOf(today(w)))) return
  if (monthIndex(nextMonth) !== monthIndex(w.state.month)) {
    void w.showMonth(nextMonth, next)
    return
  }
  w.apply({ _tag: "DayFocused", day: next })
  w.focusAfter = `[data-day="${next}"]`
  w.render()
}
