/**
 * Team services: on a round-robin service the server assigns whoever is free when no member is
 * named, and a collective service's booking has every member attend. The widget then holds
 * nothing for a particular member, sends no `staff_id`, and names who attends afterwards.
 */
import type { Booking } from "./api.js"
import type { WidgetHost } from "./host.js"

/** What this module reads of the widget, and how it reports back. */
type Host = Pick<WidgetHost, "client" | "intl" | "render" | "staffNames" | "state">

/** Staff names for the confirmation, read once per service; a failure only leaves them unnamed. */
export const loadStaffNames = (w: Host): void => {
  if (w.staffNames.size > 0) return
  w.client.staff().then((all) => {
    for (const member of all) w.staffNames.set(member.id, member.name)
    if (w.state.step._tag === "done") w.render()
  }, () => undefined)
}

/** "Ana" or "Ana and Ben": the booking's attendees by name, when their names are known. */
export const attendees = (w: Pick<WidgetHost, "intl" | "staffNames" | "state">, booking: Booking): string | undefined => {
  const ids = booking.staff_ids !== undefined && booking.staff_ids.length > 0 ? booking.staff_ids : [booking.staff_id]
  const names = ids.map((id) => w.staffNames.get(id) ?? w.state.staffList.find((s) => s.id === id)?.name)
  if (names.length === 0 || names.some((n) => n === undefined)) return undefined
  try {
    return new Intl.ListFormat(w.intl, { type: "conjunction" }).format(names as Array<string>)
  } catch {
    return names.join(", ")
  }
}
