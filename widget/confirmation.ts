/**
 * The last step: the booking's confirmation (who attends, when a team service assigned them)
 * and an .ics file to add it to a calendar. A series lists its booked dates and any skipped
 * ones; its one .ics file holds an event per booked occurrence, so skipped dates never appear.
 */
import type { Booking } from "./api.js"
import type { Step } from "./state.js"
import { h } from "./dom.js"
import { dayIn, formatDay, formatTime, zoneLabel } from "./format.js"
import { header } from "./header.js"
import { blockedList, datesList } from "./repeat.js"
import { attendees } from "./team.js"
import { ics } from "./time.js"
import type { WidgetHost } from "./host.js"

/** What this module reads of the widget, and how it reports back. */
type Host = Pick<
  WidgetHost,
  "apply" | "blobUrl" | "enterDate" | "formats" | "intl" | "options" | "run" | "slotCache" | "staffNames" | "state" | "t" | "zone"
>

export const doneView = (w: Host, { booking, occurrences, skipped }: Extract<Step, { _tag: "done" }>): Array<Node> => {
  const service = w.state.service!
  const series = occurrences.length > 1 ? occurrences : undefined
  if (w.blobUrl !== undefined) URL.revokeObjectURL(w.blobUrl)
  const account = w.state.config?.account_name ?? ""
  const stamp = new Date().toISOString()
  const event = (b: Booking) => ({
    uid: `${b.id}@slotwise`,
    start: b.start,
    end: b.end,
    stamp,
    summary: account === "" ? service.name : `${service.name} (${account})`,
    description: `Booking ${b.id}`
  })
  w.blobUrl = URL.createObjectURL(new Blob([ics((series ?? [booking]).map(event))], { type: "text/calendar" }))
  const pending = booking.status === "pending"
  const names = attendees(w, booking)
  const when = {
    service: service.name,
    date: formatDay(w, dayIn(w, booking.start)),
    time: formatTime(w, booking.start),
    zone: zoneLabel(w.zone)
  }
  const heading = pending ? w.t("pending_heading") : series !== undefined ? w.t("series_heading") : w.t("done_heading")
  const nodes: Array<Node | null> = [
    ...header(w, heading, undefined, pending ? undefined : "ok"),
    h(
      "p",
      { "data-booking": booking.id, "data-series": series === undefined ? null : String(booking.series_id ?? "") },
      series === undefined ? w.t("confirmation", when) : w.t("series_confirmation", when)
    ),
    series === undefined ? null : datesList(w, series),
    skipped.length === 0 ? null : h("p", {}, h("strong", {}, w.t("skipped"))),
    skipped.length === 0 ? null : blockedList(w, skipped),
    names === undefined ? null : h("p", { "data-attendees": "" }, w.t("with_names", { names })),
    pending ? h("p", { class: "muted" }, w.t("pending_note")) : null,
    h(
      "div",
      { class: "actions" },
      h(
        "a",
        { href: w.blobUrl, download: series === undefined ? "booking.ics" : "bookings.ics", class: "secondary", "data-focus": "ics" },
        series === undefined ? w.t("add_to_calendar") : w.t("add_all_to_calendar")
      ),
      h("button", {
        type: "button",
        class: "link",
        "data-focus": "again",
        onclick: () => {
          w.slotCache.clear()
          w.run(() => w.enterDate(false))
        }
      }, w.t("book_another"))
    )
  ]
  return nodes.filter((n): n is Node => n !== null)
}
