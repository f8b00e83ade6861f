/**
 * The details step: the visitor's name, email, phone, the service's questions and notes,
 * checked here before the booking is sent against the held time; the API's field errors
 * land on the same fields.
 */
import { ApiError, type Booking } from "./api.js"
import { h, type Props } from "./dom.js"
import { emit } from "./events.js"
import { dayIn, formatDay, formatTime, zoneLabel } from "./format.js"
import { header } from "./header.js"
import { HOLD_SECONDS, releaseHold, taken } from "./hold.js"
import type { Field } from "./options.js"
import { answersBody, controlId, questionControls, questionsOf, validateAnswers } from "./questions.js"
import { type Blocked, blockedOf, blockedView, bookedOf, repeatControls, repeatCount, repeating, rrule, validateRepeat } from "./repeat.js"
import { teamBooking } from "./team.js"
import type { Widget } from "./widget.js"

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/
const PHONE = /^\+?[0-9 ()\-.]{3,32}$/

/** An idempotency key for one booking attempt. */
export const newId = (): string =>
  typeof crypto.randomUUID === "function" ? crypto.randomUUID() : `${Date.now().toString(36)}-${Math.random().toString(36).slice(2)}`

const validate = (w: Widget): boolean => {
  const errors: Partial<Record<Field, string>> = {}
  const phone = w.fields.phone.trim()
  if (w.fields.name.trim() === "") errors.name = w.t("name_missing")
  if (!EMAIL.test(w.fields.email.trim())) errors.email = w.t("email_invalid")
  if (phone !== "" && !PHONE.test(phone)) errors.phone = w.t("phone_invalid")
  w.fieldErrors = errors
  const answered = validateAnswers(w)
  const repeat = validateRepeat(w)
  return Object.keys(errors).length === 0 && answered && repeat
}

/** Marks the form invalid: the message shown and announced, focus on the first invalid control. */
const showInvalid = (w: Widget): void => {
  const first = (["name", "email", "phone", "notes"] as const).find((f) => w.fieldErrors[f] !== undefined)
  const question = questionsOf(w).find((q) => w.answerErrors[q.id] !== undefined)
  w.busy = undefined
  w.problem = { code: "validation_failed", message: w.t("fix_fields") }
  w.focusAfter = first !== undefined
    ? `#f-${first}`
    : question !== undefined
    ? `#${controlId(question)}`
    : w.repeatError !== undefined
    ? "#r-count"
    : ".alert"
  w.render()
  w.announce(w.t("fix_fields"))
}

/** How a series with blocked dates is answered: refused whole (the default), or booked where free. */
type OnConflict = "reject" | "skip"

const submit = async (w: Widget, onConflict: OnConflict = "reject"): Promise<void> => {
  if (w.busy !== undefined) return
  if (!validate(w)) return showInvalid(w)
  w.problem = undefined
  w.busy = w.t("booking")
  w.render()
  w.announce(w.busy)
  await book(w, true, onConflict)
}

const book = async (w: Widget, withHold: boolean, onConflict: OnConflict = "reject"): Promise<void> => {
  const slot = w.slot!
  const f = w.fields
  const client: Record<string, string> = { name: f.name.trim(), email: f.email.trim(), time_zone: w.zone }
  if (f.phone.trim() !== "") client.phone = f.phone.trim()
  const body: Record<string, unknown> = { service_id: w.service!.id, start: slot.start, client }
  // Without a member named, a round-robin service assigns one and a collective one books all.
  if (!teamBooking(w) && slot.staff_id !== undefined) body.staff_id = slot.staff_id
  const series = repeating(w)
  if (series) {
    body.recurrence = { rule: rrule(w.repeatWeeks, repeatCount(w)!) }
    body.on_conflict = onConflict
    // A hold reserves one slot, not a series: let it go first, or it would stand in the series' way.
    const hold = w.hold
    if (hold !== undefined) {
      w.hold = undefined
      clearTimeout(w.renewal)
      await w.client.release(hold.id).catch(() => undefined)
    }
  }
  if (f.notes.trim() !== "") body.notes = f.notes.trim()
  const answers = answersBody(w)
  if (answers.length > 0) body.answers = answers
  if (withHold && !series && w.hold !== undefined) body.hold_id = w.hold.id
  let answer: Record<string, unknown>
  try {
    answer = await w.client.book(body, `${w.bookingKey}-${withHold ? "h" : "d"}`)
  } catch (error) {
    // The key is reused only to retry a request that may not have arrived; an answered one
    // is settled (an idempotency key with another body would be refused).
    if (!(error instanceof ApiError) || error.status !== 0) w.bookingKey = newId()
    if (error instanceof ApiError) {
      // The hold lapsed while the visitor typed: book the same time directly if it is still free.
      const holdGone = error.code === "hold_expired" ||
        (error.status === 422 && JSON.stringify(error.problem.errors ?? "").includes("hold_id"))
      if (withHold && holdGone) return book(w, false, onConflict)
      const blocked = series && error.status === 409 ? blockedOf(error.problem, "occurrences") : []
      if (blocked.length > 0) return showBlocked(w, blocked, error.code)
      if (error.status === 409) return taken(w, error)
      if (error.status === 422 && Array.isArray(error.problem.errors)) {
        let marked = false
        for (const item of error.problem.errors as Array<{ path?: string; message?: string }>) {
          const field = item.path?.replace(/^client\./, "") as Field | undefined
          const question = item.path?.startsWith("answers.") ? item.path.slice(8) : undefined
          if (field !== undefined && field in w.fields) w.fieldErrors[field] = item.message ?? ""
          else if (question !== undefined && questionsOf(w).some((q) => q.id === question)) w.answerErrors[question] = item.message ?? ""
          else continue
          marked = true
        }
        // Refused fields the visitor can correct: shown at the fields, not as a failure to retry.
        if (marked) {
          showInvalid(w)
          emit(w.host, "slotwise:error", { code: error.code, message: error.message })
          return
        }
      }
    }
    return w.fail(error, () => void book(w, withHold, onConflict))
  }
  w.occurrences = series ? bookedOf(answer) : []
  w.skipped = series ? blockedOf(answer, "skipped") : []
  w.booking = (w.occurrences[0] ?? answer) as Booking
  w.blocked = []
  w.hold = undefined
  w.bookingKey = newId()
  w.answers = {}
  w.answerErrors = {}
  emit(w.host, "slotwise:booking_created", w.booking)
  w.go("done")
}

/** A refused series: the details step stays, with each blocked date and why. */
const showBlocked = (w: Widget, blocked: ReadonlyArray<Blocked>, code: string): void => {
  w.blocked = blocked
  w.busy = undefined
  w.focusAfter = ".blocked"
  w.render()
  const message = w.body.querySelector(".blocked")?.textContent ?? w.t("blocked")
  w.announce(message)
  emit(w.host, "slotwise:error", { code, message })
}

export const detailsView = (w: Widget): Array<Node> => {
  const slot = w.slot!
  const nodes = header(w, w.t("details_heading"), () => {
    releaseHold(w)
    w.slot = undefined
    w.problem = undefined
    w.go("date")
  })
  nodes.push(h("div", { class: "summary" },
    h("p", {}, h("strong", {}, w.service!.name)),
    h("p", {}, `${formatDay(w, dayIn(w, slot.start))}, ${formatTime(w, slot.start)} (${zoneLabel(w.zone)})`),
    // The hold covers one time, not a series.
    w.hold === undefined || repeating(w) ? null : h("p", { class: "muted" }, w.t("held_until", { n: HOLD_SECONDS / 60 }))))
  const field = (name: Field, type: string, autocomplete: string, required: boolean, multiline = false) => {
    const error = w.fieldErrors[name]
    const props: Props = {
      id: `f-${name}`,
      name,
      "data-focus": `f-${name}`,
      autocomplete,
      required,
      "aria-required": required ? "true" : null,
      "aria-invalid": error !== undefined ? "true" : null,
      "aria-describedby": error !== undefined ? `e-${name}` : null,
      value: w.fields[name],
      oninput: (event: Event) => {
        w.fields[name] = (event.target as HTMLInputElement).value
      }
    }
    if (!multiline) props.type = type
    return [
      h("label", { for: `f-${name}` }, w.t(name), required ? h("span", { "aria-hidden": "true" }, " *") : null),
      multiline ? h("textarea", props) : h("input", props),
      error === undefined ? null : h("p", { class: "field-error", id: `e-${name}` }, error)
    ]
  }
  nodes.push(h("form", {
    novalidate: true,
    onsubmit: (event: Event) => {
      event.preventDefault()
      void submit(w)
    }
  },
    repeatControls(w),
    blockedView(w, () => void submit(w, "skip")),
    field("name", "text", "name", true),
    field("email", "email", "email", true),
    field("phone", "tel", "tel", false),
    questionControls(w),
    field("notes", "text", "off", false, true),
    h("div", { class: "actions" },
      h("button", { type: "submit", class: "primary", "data-focus": "book", "aria-disabled": w.busy !== undefined ? "true" : null }, w.busy === undefined ? w.t("book") : w.t("booking")))))
  return nodes
}
