/**
 * The held time: picking a time holds it through the API while the visitor types, a 409
 * offers the API's alternatives, and going back or leaving releases the hold.
 */
import { ApiError, type Hold, type Slot } from "./api.js"
import { pickFirstDay, slotsOn } from "./calendar.js"
import { emit } from "./events.js"
import { formatTime } from "./format.js"
import type { Widget } from "./widget.js"

/** How long a picked time is held while the visitor types. */
export const HOLD_SECONDS = 600

export const pickSlot = async (w: Widget, slot: Slot): Promise<void> => {
  if (w.busy !== undefined) return // a hold is already on its way
  emit(w.host, "slotwise:slot_selected", slot)
  w.problem = undefined
  w.notice = undefined
  w.busy = w.t("holding", { time: formatTime(w, slot.start) })
  w.render()
  w.announce(w.busy)
  const previous = w.hold
  try {
    w.hold = await w.client.hold({ service_id: w.service!.id, staff_id: slot.staff_id, start: slot.start, ttl_seconds: HOLD_SECONDS })
    w.slot = slot
    w.alternatives = []
    if (previous !== undefined && previous.id !== w.hold.id) releaseHold(w, previous)
    w.go("details")
  } catch (error) {
    if (error instanceof ApiError && error.status === 409) return taken(w, error)
    return w.fail(error, () => void pickSlot(w, slot))
  }
}

/** The time went to someone else: fresh slots, and the API's alternatives as choices. */
export const taken = async (w: Widget, error: ApiError): Promise<void> => {
  w.alternatives = error.alternatives
  w.notice = w.alternatives.length > 0 ? w.t("taken") : w.t("taken_none")
  emit(w.host, "slotwise:error", { code: error.code, message: w.notice })
  w.hold = undefined
  w.slot = undefined
  w.slotCache.clear()
  try {
    w.monthSlots = await w.monthSlotsFor(w.month)
  } catch {
    // the alternatives still stand
  }
  if (w.day !== undefined && slotsOn(w, w.day).length === 0) pickFirstDay(w)
  w.go("date", ".notice")
  w.announce(w.notice)
}

export const releaseHold = (w: Widget, hold: Hold | undefined = w.hold): void => {
  if (hold === undefined || w.client === undefined) return
  if (hold === w.hold) w.hold = undefined
  // Not tied to the widget's abort signal: it must go out on destroy too.
  void fetch(`${w.baseUrl()}/v1/availability/holds/${hold.id}`, {
    method: "DELETE",
    headers: { authorization: `Bearer ${w.options.key}` },
    credentials: "omit",
    keepalive: true
  }).catch(() => undefined)
}
