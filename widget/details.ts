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
import { type Field, FIELDS } from "./options.js"
import { answersBody, controlId, questionControls, questionsOf, validateAnswers } from "./questions.js"
import { blockedOf, blockedView, bookedOf, repeatControls, repeatCount, repeating, rrule, validateRepeat } from "./repeat.js"
import { type Blocked, holdOf, slotOf, teamBooking } from "./state.js"
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
  | "focusAfter"
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

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/
const PHONE = /^\+?[0-9 ()\-.]{3,32}$/

/** An idempotency key for one booking attempt. */
export const newId = (): string =>
  typeof crypto.randomUUID === "function" ? crypto.randomUUID() : `${Date.now().toString(36)}-${Math.random().toString(36).slice(2)}`

const validate = (w: Host): boolean => {
  const fields = w.state.form.fields
  const fieldErrors: Partial<Record<Field, string>> = {}
  const phone = fields.phone.trim()
  if (fields.name.trim() === "") fieldErrors.name = w.t("name_missing")
  if (!EMAIL.test(fields.email.trim())) fieldErrors.email = w.t("email_invalid")
  if (phone !== "" && !PHONE.test(phone)) fieldErrors.phone = w.t("phone_invalid")
  const answerErrors = validateAnswers(w)
  const repeatError = validateRepeat(w)
  w.apply({ _tag: "Checked", fieldErrors, answerErrors, repeatError })
  return Object.keys(fieldErrors).length === 0 && Object.keys(answerErrors).length === 0 && repeatError === undefined
}

/** Marks the form invalid: the message shown and announced, focus on the first invalid control. */
const showInvalid = (w: Host): void => {
  const { answerErrors, fieldErrors, repeatError } = w.state.form
  const first = FIELDS.find((f) => fieldErrors[f] !== undefined)
  const question = questionsOf(w).find((q) => answerErrors[q.id] !== undefined)
  w.apply({ _tag: "Failed", problem: { code: "validation_failed", message: w.t("fix_fields") } })
  w.focusAfter = first !== undefined
    ? `#f-${first}`
    : question !== undefined
    ? `#${controlId(question)}`
    : repeatError !== undefined
    ? "#r-count"
    : ".alert"
  w.render()
  w.announce(w.t("fix_fields"))
}

/** How a series with blocked dates is answered: refused whole (the default), or booked where free. */
type OnConflict = "reject" | "skip"

const submit = async (w: Host, onConflict: OnConflict = "reject"): Promise<void> => {
  if (w.state.busy !== undefined) return
  if (!validate(w)) return showInvalid(w)
  const text = w.t("booking")
  w.apply({ _tag: "Holding", text })
  w.render()
  w.announce(text)
  await book(w, true, onConflict)
}

const book = async (w: Host, withHold: boolean, onConflict: OnConflict = "reject"): Promise<void> => {
  const slot = slotOf(w.state)!
  const f = w.state.form.fields
  const client: Record<string, string> = { name: f.name.trim(), email: f.email.trim(), time_zone: w.zone }
  if (f.phone.trim() !== "") client.phone = f.phone.trim()
  const body: Record<string, unknown> = { service_id: w.state.service!.id, start: slot.start, client }
  // Without a member named, a round-robin service assigns one and a collective one books all.
  if (!teamBooking(w.state) && slot.staff_id !== undefined) body.staff_id = slot.staff_id
  const series = repeating(w)
  if (series) {
    body.recurrence = { rule: rrule(w.state.form.repeatWeeks, repeatCount(w)!) }
    body.on_conflict = onConflict
    // A hold reserves one slot, not a series: let it go first, or it would stand in the series' way.
    const hold = holdOf(w.state)
    if (hold !== undefined) {
      w.apply({ _tag: "HoldReleased" })
      clearTimeout(w.renewal)
      await w.client.release(hold.id).catch(() => undefined)
    }
  }
  if (f.notes.trim() !== "") body.notes = f.notes.trim()
  const answers = answersBody(w)
  if (answers.length > 0) body.answers = answers
  const hold = holdOf(w.state)
  if (withHold && !series && hold !== undefined) body.hold_id = hold.id
  let answer: Record<string, unknown>
  try {
    const key = `${w.state.bookingKey}-${withHold ? "h" : "d"}`
    answer = series ? await w.client.bookSeries(body, key) : await w.client.book(body, key)
  } catch (error) {
    // The key is reused only to retry a request that may not have arrived; an answered one
    // is settled (an idempotency key with another body would be refused).
    if (!(error instanceof ApiError) || error.status !== 0) w.apply({ _tag: "KeyUsed", next: newId() })
    if (error instanceof ApiError) {
      // The hold lapsed while the visitor typed: book the same time directly if it is still free.
      const holdGone = error.code === "hold_expired" ||
        (error.status === 422 && JSON.stringify(error.problem.errors ?? "").includes("hold_id"))
      if (withHold && holdGone) return book(w, false, onConflict)
      const blocked = series && error.status === 409 ? blockedOf(error.problem, "occurrences") : []
      if (blocked.length > 0) return showBlocked(w, blocked, error.code)
      if (error.status === 409) return taken(w, error)
      if (error.status === 422 && Array.isArray(error.problem.errors)) {
        const fieldErrors: Partial<Record<Field, string>> = {}
        const answerErrors: Record<string, string> = {}
        let marked = false
        for (const item of error.problem.errors as Array<{ path?: string; message?: string }>) {
          const field = item.path?.replace(/^client\./, "") as Field | undefined
          const question = item.path?.startsWith("answers.") ? item.path.slice(8) : undefined
          if (field !== undefined && FIELDS.includes(field)) fieldErrors[field] = item.message ?? ""
          else if (question !== undefined && questionsOf(w).some((q) => q.id === question)) answerErrors[question] = item.message ?? ""
          else continue
          marked = true
        }
        // Refused fields the visitor can correct: shown at the fields, not as a failure to retry.
        if (marked) {
          w.apply({ _tag: "Checked", fieldErrors, answerErrors, merge: true })
          showInvalid(w)
          emit(w.host, "slotwise:error", { code: error.code, message: error.message })
          return
        }
      }
    }
    return w.fail(error, () => void book(w, withHold, onConflict))
  }
  const occurrences = series ? bookedOf(answer) : []
  const booking = (occurrences[0] ?? answer) as Booking
  clearTimeout(w.renewal)
  emit(w.host, "slotwise:booking_created", booking)
  w.go({ _tag: "Booked", booking, occurrences, skipped: series ? blockedOf(answer, "skipped") : [], next: newId() })
}

/** A refused series: the details step stays, with each blocked date and why. */
const showBlocked = (w: Host, blocked: ReadonlyArray<Blocked>, code: string): void => {
  w.apply({ _tag: "SeriesBlocked", blocked })
  w.focusAfter = ".blocked"
  w.render()
  const message = w.body.querySelector(".blocked")?.textContent ?? w.t("blocked")
  w.announce(message)
  emit(w.host, "slotwise:error", { code, message })
}

export const detailsView = (w: Host): Array<Node> => {
  const slot = slotOf(w.state)!
  const { fieldErrors, fields } = w.state.form
  const nodes = header(w, w.t("details_heading"), () => {
    releaseHold(w)
    w.go({ _tag: "Back" })
  })
  nodes.push(
    h(
      "div",
      { class: "summary" },
      h("p", {}, h("strong", {}, w.state.service!.name)),
      h("p", {}, `${formatDay(w, dayIn(w, slot.start))}, ${formatTime(w, slot.start)} (${zoneLabel(w.zone)})`),
      // The hold covers one time, not a series.
      holdOf(w.state) === undefined || repeating(w) ? null : h("p", { class: "muted" }, w.t("held_until", { n: HOLD_SECONDS / 60 }))
    )
  )
  const field = (name: Field, type: string, autocomplete: string, required: boolean, multiline = false) => {
    const error = fieldErrors[name]
    const props: Props = {
      id: `f-${name}`,
      name,
      "data-focus": `f-${name}`,
      autocomplete,
      required,
      "aria-required": required ? "true" : null,
      "aria-invalid": error !== undefined ? "true" : null,
      "aria-describedby": error !== undefined ? `e-${name}` : null,
      value: fields[name],
      oninput: (event: Event) => w.apply({ _tag: "FieldEdited", field: name, value: (event.target as HTMLInputElement).value })
    }
    if (!multiline) props.type = type
    return [
      h("label", { for: `f-${name}` }, w.t(name), required ? h("span", { "aria-hidden": "true" }, " *") : null),
      multiline ? h("textarea", props) : h("input", props),
      error === undefined ? null : h("p", { class: "field-error", id: `e-${name}` }, error)
    ]
  }
  nodes.push(h(
    "form",
    {
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
    h(
      "div",
      { class: "actions" },
      h(
        "button",
        { type: "submit", class: "primary", "data-focus": "book", "aria-disabled": w.state.busy !== undefined ? "true" : null },
        w.state.busy === undefined ? w.t("book") : w.t("booking")
      )
    )
  ))
  return nodes
}
