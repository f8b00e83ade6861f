/**
 * The held time: picking a time holds it through the API while the visitor types, renewed
 * shortly before it lapses; a 409 offers the API's alternatives, and going back or leaving
 * releases the hold. Holds are a courtesy: when the API holds no more for this visitor, the
 * visitor goes on without one (the booking itself is still checked).
 */
import { ApiError, type Hold, type Slot } from "./api.js"
import { pickFirstDay, slotsOn } from "./calendar.js"
import { emit } from "./events.js"
import { formatTime } from "./format.js"
import { chooseNewTime } from "./manage.js"
import { teamBooking } from "./team.js"
import type { Widget } from "./widget.js"

/** How long one hold lasts: the most the API grants a publishable key. */
export const HOLD_SECONDS = 180
/** How long a picked time is kept held in all, renewal after renewal, while the visitor types. */
const KEEP_HELD_SECONDS = 600
/** How long before a hold lapses it is renewed. */
const RENEW_BEFORE_SECONDS = 30

export const pickSlot = async (w: Widget, slot: Slot): Promise<void> => {
  if (w.busy !== undefined) return // a hold is already on its way
  // Moving a booking holds nothing: the move itself is checked atomically.
  if (w.managed !== undefined) return chooseNewTime(w, slot)
  emit(w.host, "slotwise:slot_selected", slot)
  w.problem = undefined
  w.notice = undefined
  w.busy = w.t("holding", { time: formatTime(w, slot.start) })
  w.render()
  w.announce(w.busy)
  const previous = w.hold
  try {
    w.hold = await holdSlot(w, slot)
    w.slot = slot
    w.alternatives = []
    if (previous !== undefined && previous.id !== w.hold.id) releaseHold(w, previous)
    keepHeld(w, w.hold, Date.now() + KEEP_HELD_SECONDS * 1000)
    w.go("details")
  } catch (error) {
    if (error instanceof ApiError && error.status === 409) return taken(w, error)
    if (error instanceof ApiError && error.code === "hold_limit_reached") {
      // Nothing held for this visitor: book the time without a hold.
      if (previous !== undefined) releaseHold(w, previous)
      w.slot = slot
      w.alternatives = []
      return w.go("details")
    }
    return w.fail(error, () => void pickSlot(w, slot))
  }
}

/** Holds the slot's member, or, when the server assigns, whoever it picks (a collective service: everyone). */
const holdSlot = (w: Widget, slot: Slot): Promise<Hold> =>
  w.client.hold({
    service_id: w.service!.id,
    ...(teamBooking(w) || slot.staff_id === undefined ? {} : { staff_id: slot.staff_id }),
    start: slot.start,
    ttl_seconds: HOLD_SECONDS
  })

/**
 * Renews `hold` shortly before it lapses (released, then held again) while it is still the
 * widget's, until `until` (epoch ms). A renewal that fails leaves the time unheld: booking
 * it directly still works while it is free.
 */
const keepHeld = (w: Widget, hold: Hold, until: number): void => {
  clearTimeout(w.renewal)
  // The hold's own span, on the server's clock: the two clocks need not agree.
  const lasts = Date.parse(hold.expires_at) - Date.parse(hold.created_at)
  const due = Math.max(1000, lasts - RENEW_BEFORE_SECONDS * 1000)
  if (!(lasts > 0) || Date.now() + due >= until) return
  w.renewal = setTimeout(() => {
    if (w.hold !== hold || w.slot === undefined || w.busy !== undefined) return
    const slot = w.slot
    void w.client.release(hold.id)
      .then(() => holdSlot(w, slot), () => holdSlot(w, slot))
      .then((renewed) => {
        if (w.hold !== hold) return releaseHold(w, renewed)
        w.hold = renewed
        keepHeld(w, renewed, until)
      }, () => {
        if (w.hold === hold) w.hold = undefined
      })
  }, due)
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
  if (hold === w.hold) {
    w.hold = undefined
    clearTimeout(w.renewal)
  }
  // Not tied to the widget's abort signal: it must go out on destroy too.
  void fetch(`${w.baseUrl()}/v1/availability/holds/${hold.id}`, {
    method: "DELETE",
    headers: { authorization: `Bearer ${w.options.key}` },
    credentials: "omit",
    keepalive: true
  }).catch(() => undefined)
}
