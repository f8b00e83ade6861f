/** The last step: the booking's confirmation and an .ics file to add it to a calendar. */
import { h } from "./dom.js"
import { dayIn, formatDay, formatTime, zoneLabel } from "./format.js"
import { header } from "./header.js"
import { ics } from "./time.js"
import type { Widget } from "./widget.js"

export const doneView = (w: Widget): Array<Node> => {
  const booking = w.booking!
  const service = w.service!
  if (w.blobUrl !== undefined) URL.revokeObjectURL(w.blobUrl)
  const account = w.config?.account_name ?? ""
  w.blobUrl = URL.createObjectURL(new Blob([ics({
    uid: `${booking.id}@slotwise`,
    start: booking.start,
    end: booking.end,
    stamp: new Date().toISOString(),
    summary: account === "" ? service.name : `${service.name} (${account})`,
    description: `Booking ${booking.id}`
  })], { type: "text/calendar" }))
  const pending = booking.status === "pending"
  const nodes: Array<Node | null> = [
    ...header(w, pending ? w.t("pending_heading") : w.t("done_heading"), undefined, pending ? undefined : "ok"),
    h("p", { "data-booking": booking.id }, w.t("confirmation", {
      service: service.name,
      date: formatDay(w, dayIn(w, booking.start)),
      time: formatTime(w, booking.start),
      zone: zoneLabel(w.zone)
    })),
    pending ? h("p", { class: "muted" }, w.t("pending_note")) : null,
    h("div", { class: "actions" },
      h("a", { href: w.blobUrl, download: "booking.ics", class: "secondary", "data-focus": "ics" }, w.t("add_to_calendar")),
      h("button", {
        type: "button",
        class: "link",
        "data-focus": "again",
        onclick: () => {
          w.booking = undefined
          w.slot = undefined
          w.slotCache.clear()
          w.run(() => w.enterDate(false))
        }
      }, w.t("book_another")))
  ]
  return nodes.filter((n): n is Node => n !== null)
}
