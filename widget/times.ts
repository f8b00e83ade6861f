/** The chosen day's times: a group of buttons with a roving tabindex that follows the laid-out grid. */
import { slotsOn } from "./state.js"
import { h } from "./dom.js"
import { formatDay, formatTime } from "./format.js"
import { pickSlot } from "./hold.js"
import type { WidgetHost } from "./host.js"

/** What this module reads of the widget, and how it reports back. */
type Host = Pick<
  WidgetHost,
  | "announce"
  | "apply"
  | "baseUrl"
  | "body"
  | "client"
  | "fail"
  | "formats"
  | "go"
  | "host"
  | "intl"
  | "monthSlotsFor"
  | "options"
  | "render"
  | "renewal"
  | "slotCache"
  | "state"
  | "t"
  | "zone"
>

export const timesView = (w: Host): Array<Node> => {
  const { day, monthSlots, focusTime } = w.state
  if (day === undefined) return monthSlots === undefined ? [] : [h("p", { class: "muted" }, w.t("choose_day"))]
  const slots = slotsOn(w.state, day)
  const focusIndex = Math.min(focusTime, Math.max(0, slots.length - 1))
  return [
    h("h3", { id: "times-label" }, w.t("times_for", { date: formatDay(w, day) })),
    h(
      "div",
      {
        class: "times",
        role: "group",
        "aria-labelledby": "times-label",
        onkeydown: (e: KeyboardEvent) => timesKey(w, e, slots.length)
      },
      slots.map((slot, i) =>
        h("button", {
          type: "button",
          class: "time",
          tabindex: i === focusIndex ? "0" : "-1",
          "data-start": slot.start,
          "data-index": String(i),
          "data-focus": `time-${slot.start}`,
          onclick: () => {
            w.apply({ _tag: "TimeFocused", index: i })
            void pickSlot(w, slot)
          }
        }, formatTime(w, slot.start))
      )
    )
  ]
}

const timesKey = (w: Host, event: KeyboardEvent, count: number): void => {
  const target = event.target as HTMLElement
  const index = Number(target.getAttribute("data-index") ?? 0)
  const buttons = Array.from(w.body.querySelectorAll<HTMLElement>(".time"))
  // Columns as laid out now: the buttons on the first button's row.
  const columns = Math.max(1, buttons.filter((b) => b.offsetTop === buttons[0]?.offsetTop).length)
  const moves: Record<string, number> = {
    ArrowLeft: index - 1,
    ArrowRight: index + 1,
    ArrowUp: index - columns,
    ArrowDown: index + columns,
    Home: 0,
    End: count - 1
  }
  const next = moves[event.key]
  if (next === undefined) return
  event.preventDefault()
  if (next < 0 || next >= count) return
  w.apply({ _tag: "TimeFocused", index: next })
  for (const button of buttons) button.setAttribute("tabindex", button === buttons[next] ? "0" : "-1")
  buttons[next]?.focus()
}
