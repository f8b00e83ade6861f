/**
 * Booking questions: what a service asks the client when booking, and the one rule that
 * checks a booking's answers against them. The answers are stored on the booking with the
 * question's label and type as they were then, so later edits of the questions never change
 * what the client answered.
 */
import { Either, Schema } from "effect"
import { EMAIL_PATTERN, optional, PHONE_PATTERN, Text } from "../domain/common.js"
import type { FieldError } from "../domain/errors.js"

export const QUESTION_TYPES = ["text", "long_text", "email", "phone", "number", "select", "multi_select", "checkbox"] as const
export const QuestionType = Schema.Literal(...QUESTION_TYPES).annotations({
  description: "the kind of answer: `text`, `long_text`, `email`, `phone`, `number`, `select` (one option), " +
    "`multi_select` (any of the options), `checkbox` (true or false)"
})
export type QuestionType = typeof QuestionType.Type

/** The types whose answers are picked from `options`. */
const CHOICE_TYPES: ReadonlySet<QuestionType> = new Set(["select", "multi_select"])

export const MAX_QUESTIONS = 20
export const MAX_OPTIONS = 50
/** The longest text answer, in characters. */
export const MAX_ANSWER_LENGTH = 2000

const QuestionId = Schema.String.pipe(
  Schema.pattern(/^[a-z0-9_]{1,40}$/, { message: () => "must be 1 to 40 lower-case letters, digits or _" }),
  Schema.annotations({ description: "the question's key in answers: 1 to 40 of `a-z`, `0-9`, `_`, unique in the service" })
)

const Label = Schema.String.pipe(
  Schema.filter((s) => s.trim().length > 0 || "must not be empty"),
  Schema.maxLength(200),
  Schema.annotations({ description: "what the client is asked, 1 to 200 characters" })
)

/** The first index in `items` that repeats an earlier item, with a message; `true` when all differ. */
const firstRepeat = <A>(items: ReadonlyArray<A>, key: (item: A) => string, message: (item: A) => string) => {
  const seen = new Set<string>()
  for (const [index, item] of items.entries()) {
    if (seen.has(key(item))) return { path: [index], message: message(item) }
    seen.add(key(item))
  }
  return true
}

const Options = Schema.Array(Label.annotations({ description: "an option, 1 to 200 characters" })).pipe(
  Schema.filter((options) => firstRepeat(options, (o) => o, () => "repeats an earlier option")),
  Schema.minItems(1),
  Schema.maxItems(MAX_OPTIONS),
  Schema.annotations({ description: `the choices of a \`select\` or \`multi_select\` question: 1 to ${MAX_OPTIONS} distinct strings` })
)

export const Question = Schema.Struct({
  id: QuestionId,
  label: Label,
  type: QuestionType,
  required: Schema.Boolean.annotations({ description: "a booking must answer it (a required checkbox must be checked)" }),
  options: optional(Options),
  help: optional(Text(500).annotations({ description: "a hint shown with the question, up to 500 characters" }))
}).pipe(
  Schema.filter((q) => {
    if (CHOICE_TYPES.has(q.type) && q.options === undefined) {
      return { path: ["options"], message: `is required for a ${q.type} question: 1 to ${MAX_OPTIONS} distinct strings` }
    }
    if (!CHOICE_TYPES.has(q.type) && q.options !== undefined) {
      return { path: ["options"], message: "is allowed only for select and multi_select questions" }
    }
    return true
  })
).annotations({ identifier: "Question", description: "a question the client answers when booking" })
export type Question = typeof Question.Type

export const Questions = Schema.Array(Question).pipe(
  Schema.filter((questions) => {
    const repeat = firstRepeat(questions, (q) => q.id, (q) => `repeats the question id ${q.id}`)
    return repeat === true ? true : { path: [...repeat.path, "id"], message: repeat.message }
  }),
  Schema.maxItems(MAX_QUESTIONS),
  Schema.annotations({ description: `what a booking asks the client, in order (up to ${MAX_QUESTIONS})` })
)

const ANSWER_VALUE = "text for text, long_text, email and phone; a number for number; one option for select; " +
  "a list of distinct options for multi_select; true or false for checkbox"

export const AnswerValue = Schema.Union(Schema.String, Schema.Number, Schema.Boolean, Schema.Array(Schema.String)).annotations({
  description: ANSWER_VALUE
})
export type AnswerValue = typeof AnswerValue.Type

/** An answer as a booking request gives it; its value is checked against the question by {@link checkAnswers}. */
export const AnswerInput = Schema.Struct({
  question_id: Schema.String.annotations({ description: "the `id` of one of the service's questions" }),
  // Any JSON: a value of the wrong kind is reported at `answers.<question_id>`, in the question's terms.
  value: Schema.Unknown.annotations({
    description: ANSWER_VALUE,
    jsonSchema: { anyOf: [{ type: "string" }, { type: "number" }, { type: "boolean" }, { type: "array", items: { type: "string" } }] }
  })
}).annotations({ identifier: "AnswerInput", description: "the client's answer to one question" })
export type AnswerInput = typeof AnswerInput.Type

export const AnswersInput = Schema.Array(AnswerInput).pipe(
  Schema.maxItems(MAX_QUESTIONS),
  Schema.annotations({ description: "answers to the service's questions, each question at most once" })
)

export const Answer = Schema.Struct({
  question_id: Schema.String.annotations({ description: "the question's id" }),
  label: Schema.String.annotations({ description: "the question's label when it was answered" }),
  type: QuestionType,
  value: AnswerValue
}).annotations({ identifier: "Answer", description: "the client's answer, with the question as it was asked" })
export type Answer = typeof Answer.Type

/** An answer left empty: no text, or no option picked. */
const isBlank = (value: unknown): boolean =>
  value === undefined || (typeof value === "string" && value.trim() === "") || (Array.isArray(value) && value.length === 0)

const optionsText = (question: Question) => (question.options ?? []).join(", ")

/** The stored value of an answer to `question`, or what is wrong with it. */
const answerValue = (question: Question, value: unknown): Either.Either<AnswerValue, string> => {
  switch (question.type) {
    case "text":
    case "long_text":
    case "email":
    case "phone": {
      if (typeof value !== "string") return Either.left("must be text")
      const text = value.trim()
      if (text.length > MAX_ANSWER_LENGTH) return Either.left(`must be at most ${MAX_ANSWER_LENGTH} characters`)
      if (question.type === "email" && !(text.length <= 254 && EMAIL_PATTERN.test(text))) return Either.left("must be an email address")
      if (question.type === "phone" && !PHONE_PATTERN.test(text)) return Either.left("must be a phone number")
      return Either.right(text)
    }
    case "number":
      return typeof value === "number" && Number.isFinite(value) ? Either.right(value) : Either.left("must be a number")
    case "checkbox":
      if (typeof value !== "boolean") return Either.left("must be true or false")
      return question.required && !value ? Either.left("must be checked") : Either.right(value)
    case "select":
      return typeof value === "string" && question.options!.includes(value)
        ? Either.right(value)
        : Either.left(`must be one of: ${optionsText(question)}`)
    case "multi_select": {
      const picked = value
      if (!Array.isArray(picked) || !picked.every((v): v is string => typeof v === "string" && question.options!.includes(v))) {
        return Either.left(`must be a list of options from: ${optionsText(question)}`)
      }
      return new Set(picked).size === picked.length ? Either.right(picked) : Either.left("must name each option at most once")
    }
  }
}

/**
 * Checks a booking's answers against its service's questions: every answer must name a
 * question, once, with a value of the question's type; every required question must be
 * answered. Gives the answers to store (in the questions' order, each with the question's
 * label and type; optional questions left blank are left out), or one error per answer at
 * `answers.<question_id>`.
 */
export const checkAnswers = (
  questions: ReadonlyArray<Question>,
  answers: ReadonlyArray<AnswerInput>
): Either.Either<Array<Answer>, Array<FieldError>> => {
  // Most services ask nothing and most requests answer nothing: nothing to index or check.
  if (questions.length === 0 && answers.length === 0) return Either.right([])
  const errors: Array<FieldError> = []
  const given = new Map<string, unknown>()
  const byId = new Map(questions.map((q) => [q.id, q]))
  for (const answer of answers) {
    const path = `answers.${answer.question_id}`
    if (!byId.has(answer.question_id)) errors.push({ path, message: "is not a question of this service" })
    else if (given.has(answer.question_id)) errors.push({ path, message: "is answered more than once" })
    given.set(answer.question_id, answer.value)
  }
  const reported = new Set(errors.map((e) => e.path))
  const stored: Array<Answer> = []
  for (const question of questions) {
    const path = `answers.${question.id}`
    if (reported.has(path)) continue
    const value = given.get(question.id)
    if (isBlank(value)) {
      if (question.required) errors.push({ path, message: question.type === "checkbox" ? "must be checked" : "is required" })
      continue
    }
    Either.match(answerValue(question, value), {
      onLeft: (message) => errors.push({ path, message }),
      onRight: (checked) => stored.push({ question_id: question.id, label: question.label, type: question.type, value: checked })
    })
  }
  return errors.length > 0 ? Either.left(errors) : Either.right(stored)
}
