/**
 * The service's booking questions in the details step: one labelled native control per
 * question, the help text as its description, the same checks the API makes before the
 * request is sent, and the answers as the API takes them. The API stays the judge: its
 * errors for `answers.<id>` land on the same controls.
 */
import type { Question } from "./api.js"
import { h, type Props } from "./dom.js"
import type { AnswerValue } from "./state.js"
import type { WidgetHost } from "./host.js"

/** What this module reads of the widget, and how it reports back. */
type Host = Pick<WidgetHost, "apply" | "state" | "t">

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/
const PHONE = /^\+?[0-9 ()\-.]{3,32}$/
const MAX_LENGTH = 2000

const INPUT_TYPES: Partial<Record<Question["type"], string>> = { text: "text", email: "email", phone: "tel", number: "number" }

export const questionsOf = (w: Pick<WidgetHost, "state">): ReadonlyArray<Question> => w.state.service?.questions ?? []

/** The id of a question's control (its first box, for a group): where focus goes when it is invalid. */
export const controlId = (q: Question): string => (q.type === "multi_select" ? `q-${q.id}-0` : `q-${q.id}`)

const textOf = (w: Host, q: Question): string => {
  const value = w.state.form.answers[q.id]
  return typeof value === "string" ? value.trim() : ""
}
const picked = (w: Host, q: Question): ReadonlyArray<string> => {
  const value = w.state.form.answers[q.id]
  return Array.isArray(value) ? value : []
}

/** What is wrong with the visitor's answer to `q`, in their language, if anything. */
const problemOf = (w: Host, q: Question): string | undefined => {
  if (q.type === "checkbox") return q.required && w.state.form.answers[q.id] !== true ? w.t("must_check") : undefined
  if (q.type === "multi_select") return q.required && picked(w, q).length === 0 ? w.t("answer_missing") : undefined
  const text = textOf(w, q)
  if (text === "") return q.required ? w.t("answer_missing") : undefined
  if (q.type === "email" && !EMAIL.test(text)) return w.t("email_invalid")
  if (q.type === "phone" && !PHONE.test(text)) return w.t("phone_invalid")
  if (q.type === "number" && !Number.isFinite(Number(text))) return w.t("number_invalid")
  return undefined
}

/** What is wrong with the answers, keyed by question id (empty when nothing is). */
export const validateAnswers = (w: Host): Record<string, string> => {
  const errors: Record<string, string> = {}
  for (const q of questionsOf(w)) {
    const problem = problemOf(w, q)
    if (problem !== undefined) errors[q.id] = problem
  }
  return errors
}

/** The answers as the API takes them: blank optional answers left out, numbers as numbers. */
export const answersBody = (w: Host): Array<{ question_id: string; value: AnswerValue | number }> =>
  questionsOf(w).flatMap((q): Array<{ question_id: string; value: AnswerValue | number }> => {
    if (q.type === "checkbox") return [{ question_id: q.id, value: w.state.form.answers[q.id] === true }]
    if (q.type === "multi_select") return picked(w, q).length === 0 ? [] : [{ question_id: q.id, value: picked(w, q) }]
    const text = textOf(w, q)
    if (text === "") return []
    return [{ question_id: q.id, value: q.type === "number" ? Number(text) : text }]
  })

const requiredMark = (q: Question) => (q.required ? h("span", { "aria-hidden": "true" }, " *") : null)

/** The question's help and error paragraphs, and the ids that describe its control. */
const descriptions = (w: Host, q: Question) => {
  const error = w.state.form.answerErrors[q.id]
  const ids = [q.help ? `hq-${q.id}` : "", error !== undefined ? `eq-${q.id}` : ""].filter(Boolean).join(" ")
  return {
    error,
    describedBy: ids === "" ? null : ids,
    nodes: [
      q.help ? h("p", { class: "muted hint", id: `hq-${q.id}` }, q.help) : null,
      error === undefined ? null : h("p", { class: "field-error", id: `eq-${q.id}` }, error)
    ]
  }
}

const questionControl = (w: Host, q: Question): Array<Node | null> => {
  const { describedBy, error, nodes } = descriptions(w, q)
  const id = `q-${q.id}`
  const common: Props = {
    id,
    name: id,
    "data-focus": id,
    "aria-invalid": error !== undefined ? "true" : null,
    "aria-describedby": describedBy
  }
  if (q.type === "checkbox") {
    return [
      h(
        "label",
        { class: "check solo", for: id },
        h("input", {
          ...common,
          type: "checkbox",
          checked: w.state.form.answers[q.id] === true,
          "aria-required": q.required ? "true" : null,
          onchange: (e: Event) => {
            w.apply({ _tag: "AnswerEdited", id: q.id, value: (e.target as HTMLInputElement).checked })
          }
        }),
        h("span", {}, q.label, requiredMark(q))
      ),
      ...nodes
    ]
  }
  if (q.type === "multi_select") {
    const chosen = new Set(picked(w, q))
    return [
      h(
        "fieldset",
        { "aria-describedby": describedBy },
        h("legend", {}, q.label, requiredMark(q)),
        (q.options ?? []).map((option, i) =>
          h(
            "label",
            { class: "check", for: `${id}-${i}` },
            h("input", {
              id: `${id}-${i}`,
              name: id,
              "data-focus": `${id}-${i}`,
              type: "checkbox",
              value: option,
              checked: chosen.has(option),
              "aria-invalid": error !== undefined ? "true" : null,
              onchange: (e: Event) => {
                const box = e.target as HTMLInputElement
                const now = new Set(picked(w, q))
                if (box.checked) now.add(option)
                else now.delete(option)
                // Kept in the question's order, whatever order the boxes were ticked in.
                w.apply({ _tag: "AnswerEdited", id: q.id, value: (q.options ?? []).filter((o) => now.has(o)) })
              }
            }),
            h("span", {}, option)
          )
        ),
        ...nodes
      )
    ]
  }
  const props: Props = {
    ...common,
    required: q.required,
    "aria-required": q.required ? "true" : null,
    value: typeof w.state.form.answers[q.id] === "string" ? w.state.form.answers[q.id] as string : "",
    [q.type === "select" ? "onchange" : "oninput"]: (e: Event) => {
      w.apply({ _tag: "AnswerEdited", id: q.id, value: (e.target as HTMLInputElement).value })
    }
  }
  const control = q.type === "select"
    ? h("select", props, h("option", { value: "" }, w.t("choose_option")), (q.options ?? []).map((o) => h("option", { value: o }, o)))
    : q.type === "long_text"
    ? h("textarea", { ...props, maxlength: MAX_LENGTH })
    : h("input", {
      ...props,
      type: INPUT_TYPES[q.type] ?? "text",
      maxlength: q.type === "number" ? null : MAX_LENGTH,
      inputmode: q.type === "number" ? "decimal" : null,
      step: q.type === "number" ? "any" : null
    })
  // A select's value is set after its options exist.
  if (q.type === "select") (control as HTMLSelectElement).value = props.value as string
  return [h("label", { for: id }, q.label, requiredMark(q)), control, ...nodes]
}

export const questionControls = (w: Host): Array<Node | null> => questionsOf(w).flatMap((q) => questionControl(w, q))
