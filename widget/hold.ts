/**
 * The held time: picking a time holds it through the API while the visitor types, renewed
 * shortly before it lapses; a 409 offers the API's alternatives, and going back or leaving
 * releases the hold. Holds are a courtesy: when the API holds no more for this visitor, the
 * visitor goes on without one (the booking itself is still checked).
 */
import { ApiError, type Hold, type Slot } from "./api.js"
import { emit } from "./events.js"
import { formatTime } from "./format.js"
import { chooseNewTime } from "./manage.js"
import { holdOf, slotOf, teamBooking } from "./state.js"
import type { WidgetHost } from "./host.js"
import { VISITOR_HOLD_MAX_TTL_SECONDS } from "../src/domain/holdLifetime.js"

/** What this module reads of the widget, and how it reports back. */
type Host = Pick<
  WidgetHost,
  | "announce"
  | "apply"
  | "baseUrl"
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

/** How long one hold lasts: the most the API grants a publishable key. */
export const HOLD_SECONDS = VISITOR_HOLD_MAX_TTL_SECONDS
/** How long a picked time is kept held in all, renewal after renewal, while the visitor types. */
const KEEP_HELD_SECONDS = 600
/** How long before a hold lapses it is renewed. */
const RENEW_BEFORE_SECONDS = 30

export const pickSlot = async (w: Host, slot: Slot): Promise<void> => {
  if (w.state.busy !== undefined) return // a hold is already on its way
  // Moving a booking holds nothing: the move itself is checked atomically.
  if (w.state.managed !== undefined) return chooseNewTime(w, slot)
  emit(w.host, "slotwise:slot_selected", slot)
  const text = w.t("holding", { time: formatTime(w, slot.start) })
  w.apply({ _tag: "Holding", text })
  w.render()
  w.announce(text)
  try {
    const hold = await holdSlot(w, slot)
    w.go({ _tag: "Held", slot, hold })
    keepHeld(w, hold, Date.now() + KEEP_HELD_SECONDS * 1000)
  } catch (error) {
    if (error instanceof ApiError && error.status === 409) return taken(w, error)
    // Nothing held for this visitor: book the time without a hold.
    if (error instanceof ApiError && error.code === "hold_limit_reached") return w.go({ _tag: "Held", slot, hold: undefined })
    return w.fail(error, () => void pickSlot(w, slot))
  }
}

/** Holds the slot's member, or, when the server assigns, whoever it picks (a collective service: everyone). */
const holdSlot = (w: Host, slot: Slot): Promise<Hold> =>
  w.client.hold({
    service_id: w.state.service!.id,
    ...(teamBooking(w.state) || slot.staff_id === undefined ? {} : { staff_id: slot.staff_id }),
    start: slot.start,
    ttl_seconds: HOLD_SECONDS
  })

/**
 * Renews `hold` shortly before it lapses (released, then held again) while it is still the
 * widget's, until `until` (epoch ms). A renewal that fails leaves the time unheld: booking
 * it directly still works while it is free.
 */
const keepHeld = (w: Host, hold: Hold, until: number): void => {
  clearTimeout(w.renewal)
  // The hold's own span, on the server's clock: the two clocks need not agree.
  const lasts = Date.parse(hold.expires_at) - Date.parse(hold.created_at)
  const due = Math.max(1000, lasts - RENEW_BEFORE_SECONDS * 1000)
  if (!(lasts > 0) || Date.now() + due >= until) return
  w.renewal = setTimeout(() => {
    const slot = slotOf(w.state)
    if (holdOf(w.state) !== hold || slot === undefined || w.state.busy !== undefined) return
    void w.client.release(hold.id)
      .then(() => holdSlot(w, slot), () => holdSlot(w, slot))
      .then((renewed) => {
        if (holdOf(w.state) !== hold) return releaseHold(w, renewed)
        w.apply({ _tag: "HoldRenewed", from: hold, to: renewed })
        keepHeld(w, renewed, until)
      }, () => w.apply({ _tag: "HoldRenewed", from: hold, to: undefined }))
  }, due)
}

/** The time went to someone else: fresh slots, and the API's alternatives as choices. */
export const taken = async (w: Host, error: ApiError): Promise<void> => {
  const alternatives = error.alternatives
  const notice = alternatives.length > 0 ? w.t("taken") : w.t("taken_none")
  emit(w.host, "slotwise:error", { code: error.code, message: notice })
  clearTimeout(w.renewal)
  w.slotCache.clear()
  let slots: ReadonlyArray<Slot> | undefined
  try {
    slots = await w.monthSlotsFor(w.state.month)
  } catch {
    // the alternatives still stand
  }
  w.go({ _tag: "Taken", notice, alternatives, slots }, ".notice")
  w.announce(notice)
}

export const releaseHold = (
  w: Pick<WidgetHost, "apply" | "baseUrl" | "client" | "options" | "renewal" | "state">,
  hold: Hold | undefined = holdOf(w.state)
): void => {
  if (hold === undefined || w.client === undefined) return
  if (hold === holdOf(w.state)) {
    w.apply({ _tag: "HoldReleased" })
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
