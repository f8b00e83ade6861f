/**
 * Manage mode (`manage_token`): the booking as its client sees it through a manage link, with
 * cancelling (a reason, after a confirmation step) and moving it to another free time picked
 * on the widget's own calendar. The token is the only credential; what the client may do
 * comes from the API (`can_cancel`, `can_reschedule` and their refusals).
 */
import { ApiError, type ManagedBooking, type Slot } from "./api.js"
import { h } from "./dom.js"
import { dayIn, formatDay, formatTime, zoneLabel } from "./format.js"
import { header } from "./header.js"
import type { StringKey } from "./strings.js"
import type { Step } from "./state.js"
import { isTimeZone, monthRange, type YearMonth } from "./time.js"
import type { WidgetHost } from "./host.js"

/** What this module reads of the widget, and how it reports back. */
type Host = Pick<
  WidgetHost,
  | "apply"
  | "body"
  | "client"
  | "enterDate"
  | "fail"
  | "formats"
  | "go"
  | "intl"
  | "linkInvalid"
  | "options"
  | "render"
  | "run"
  | "slotCache"
  | "state"
  | "t"
  | "zone"
>

const token = (w: Pick<WidgetHost, "options">): string => w.options.manage_token ?? ""

/** Reads the booking again and shows it, with `note` (what just happened) announced. */
export const loadManaged = async (w: Host, note?: string): Promise<void> => {
  const managed = await w.client.manage(token(w))
  showManaged(w, managed, note)
}

const showManaged = (w: Host, managed: ManagedBooking, note?: string): void => {
  w.go(
    { _tag: "ManagedShown", managed, zone: isTimeZone(managed.time_zone) ? managed.time_zone : undefined, note },
    note === undefined ? "h2" : ".notice"
  )
}

/** A manage call's failure: an unknown link ends the page; a refused action shows the booking as it is now. */
const failAction = (w: Host, error: unknown, retry: () => void): Promise<void> => {
  if (error instanceof ApiError && error.status === 404) return Promise.resolve(w.linkInvalid())
  if (error instanceof ApiError && (error.status === 409 || error.status === 422)) {
    const key: StringKey = error.status === 409 ? "move_taken" : "action_refused"
    w.slotCache.clear()
    return loadManaged(w, w.t(key)).catch((again) => w.fail(again, retry))
  }
  return w.fail(error, retry)
}

export const manageSlots = (w: Pick<WidgetHost, "client" | "options">, month: YearMonth): Promise<ReadonlyArray<Slot>> =>
  w.client.manageSlots(token(w), monthRange(month))

const STATUS_KEYS: Record<string, StringKey> = {
  confirmed: "status_confirmed",
  pending: "status_pending",
  cancelled: "status_cancelled",
  completed: "status_completed",
  no_show: "status_no_show"
}

const when = (w: Host, iso: string): string => `${formatDay(w, dayIn(w, iso))}, ${formatTime(w, iso)} (${zoneLabel(w.zone)})`

const answerText = (w: Host, value: unknown): string =>
  Array.isArray(value) ? value.map(String).join(", ") : typeof value === "boolean" ? w.t(value ? "yes" : "no") : String(value ?? "")

/** Why an action is not offered: the notice period, or a booking that is final. */
const refusalText = (w: Host, refusal: ManagedBooking["cancel_refusal"]): string | undefined =>
  refusal === null
    ? undefined
    : refusal.code === "notice_period_passed"
    ? w.t("notice_passed", { n: w.state.managed!.service.cancellation_notice_minutes })
    : w.t("final")

const row = (label: string, value: string, attrs: Record<string, string> = {}): Array<Node> => [h("dt", {}, label), h("dd", attrs, value)]

export const manageView = (w: Host): Array<Node> => {
  const b = w.state.managed!
  const nodes: Array<Node> = [...header(w, b.status === "cancelled" ? w.t("cancelled_heading") : w.t("manage_heading"))]
  const note = w.state.manageNote
  if (note !== undefined) nodes.push(h("p", { class: "notice", role: "status" }, note))
  nodes.push(
    h(
      "dl",
      { class: "summary", "data-managed": b.id },
      row(w.t("service"), `${b.service.name} · ${w.t("minutes", { n: b.service.duration_minutes })}`),
      row(w.t("with"), b.staff.name),
      row(w.t("when"), when(w, b.start), { "data-start": b.start }),
      row(w.t("status"), w.t(STATUS_KEYS[b.status] ?? "status_confirmed"), { "data-status": b.status }),
      ...(b.cancellation_reason ? row(w.t("reason"), b.cancellation_reason) : [])
    )
  )
  if (b.answers !== undefined && b.answers.length > 0) {
    nodes.push(
      h("h3", {}, w.t("your_answers")),
      h("dl", { class: "summary" }, b.answers.flatMap((a) => row(a.label, answerText(w, a.value))))
    )
  }
  const reasons = [...new Set([refusalText(w, b.reschedule_refusal), refusalText(w, b.cancel_refusal)].filter((r) => r !== undefined))]
  // A cancelled booking says so in its heading; the other refusals are spelled out.
  if (b.status !== "cancelled") { for (const reason of reasons) nodes.push(h("p", { class: "muted", "data-refusal": "" }, reason)) }
  const action = (name: string, kind: string, label: string, run: () => void) =>
    h("button", {
      type: "button",
      class: kind,
      "data-focus": name,
      "data-action": name,
      onclick: () => {
        w.apply({ _tag: "NoteCleared" })
        run()
      }
    }, label)
  const actions: Array<Node> = []
  if (b.can_reschedule) actions.push(action("move", "primary", w.t("move_booking"), () => w.run(() => w.enterDate(true))))
  if (b.can_cancel) actions.push(action("cancel", "secondary", w.t("cancel_booking"), () => w.go({ _tag: "Shown", step: "cancel" })))
  if (actions.length > 0) nodes.push(h("div", { class: "actions" }, actions))
  return nodes
}

const toManage = (w: Host) => () => w.go({ _tag: "Shown", step: "manage" })
const toDate = (w: Host) => () => w.go({ _tag: "Shown", step: "date" })

/** Sends a manage action once, with `text` shown while it runs. */
const busyWith = (w: Host, text: string): boolean => {
  if (w.state.busy !== undefined) return false
  w.apply({ _tag: "Busy", text })
  w.render()
  return true
}

export const cancelView = (w: Host): Array<Node> => {
  const b = w.state.managed!
  const submit = (event: Event) => {
    event.preventDefault()
    const reason = (w.body.querySelector<HTMLTextAreaElement>("#reason")?.value ?? "").trim()
    if (!busyWith(w, w.t("cancelling"))) return
    const run = (): void =>
      void w.client.manageCancel(token(w), reason === "" ? undefined : reason)
        .then((managed) => showManaged(w, managed, w.t("cancelled_note")), (error) => failAction(w, error, run))
    run()
  }
  return [
    ...header(w, w.t("cancel_heading"), toManage(w)),
    h("p", {}, `${b.service.name} · ${when(w, b.start)}`),
    h(
      "form",
      { onsubmit: submit, novalidate: true },
      h("label", { for: "reason" }, w.t("reason_optional")),
      h("textarea", { id: "reason", name: "reason", maxlength: "1000", "data-focus": "reason" }),
      h(
        "div",
        { class: "actions" },
        h(
          "button",
          { type: "submit", class: "primary", "data-focus": "confirm-cancel", "data-action": "confirm-cancel" },
          w.t("confirm_cancel")
        ),
        h("button", { type: "button", class: "secondary", "data-focus": "keep", onclick: toManage(w) }, w.t("keep_booking"))
      )
    )
  ]
}

/** A time picked on the calendar in manage mode: confirm the move first. */
export const chooseNewTime = (w: Pick<WidgetHost, "go">, slot: Slot): void => {
  w.go({ _tag: "MoveChosen", slot })
}

export const moveView = (w: Host, { slot }: Extract<Step, { _tag: "move" }>): Array<Node> => {
  const b = w.state.managed!
  const confirm = () => {
    if (!busyWith(w, w.t("moving"))) return
    const run = (): void =>
      void w.client.manageReschedule(token(w), slot.start).then((managed) => {
        w.slotCache.clear()
        showManaged(w, managed, w.t("moved_note", { when: when(w, managed.start) }))
      }, (error) => failAction(w, error, run))
    run()
  }
  return [
    ...header(w, w.t("move_heading"), toDate(w)),
    h(
      "dl",
      { class: "summary" },
      row(w.t("from"), when(w, b.start)),
      row(w.t("to"), when(w, slot.start), { "data-new-start": slot.start })
    ),
    h(
      "div",
      { class: "actions" },
      h(
        "button",
        { type: "button", class: "primary", "data-focus": "confirm-move", "data-action": "confirm-move", onclick: confirm },
        w.t("confirm_move")
      ),
      h("button", { type: "button", class: "secondary", "data-focus": "keep", onclick: toDate(w) }, w.t("choose_other_time"))
    )
  ]
}
