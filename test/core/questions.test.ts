/** Booking questions: their definitions on a service, the answer rule, and answers on bookings. */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Either } from "effect"
import { checkAnswers, type Question } from "../../src/services/index.js"
import { core, CoreTest, refusal, salonIn } from "../support/coreTest.js"
import { at, MONDAY_9 } from "../support/fixtures.js"

const QUESTIONS: ReadonlyArray<Question> = [
  { id: "topic", label: "What is it about?", type: "text", required: true, help: "A few words" },
  { id: "history", label: "Anything we should know?", type: "long_text", required: false },
  { id: "contact", label: "Other email", type: "email", required: false },
  { id: "mobile", label: "Mobile", type: "phone", required: false },
  { id: "guests", label: "Guests", type: "number", required: false },
  { id: "length", label: "Hair length", type: "select", required: true, options: ["Short", "Long"] },
  { id: "extras", label: "Extras", type: "multi_select", required: false, options: ["Wash", "Beard", "Colour"] },
  { id: "terms", label: "I accept the terms", type: "checkbox", required: true }
]

const valid = [
  { question_id: "topic", value: "  Trim  " },
  { question_id: "length", value: "Long" },
  { question_id: "terms", value: true }
]

const errorsOf = (answers: ReadonlyArray<{ question_id: string; value: unknown }>) =>
  Either.match(checkAnswers(QUESTIONS, answers), { onLeft: (errors) => errors, onRight: () => [] })

describe("the answer rule", () => {
  it("stores answers in the questions' order with their label and type, trimmed, leaving out unanswered optional ones", () => {
    const answers = [
      { question_id: "terms", value: true },
      { question_id: "extras", value: ["Beard", "Wash"] },
      { question_id: "guests", value: 2.5 },
      { question_id: "history", value: "   " },
      ...valid.slice(0, 2)
    ]
    expect(checkAnswers(QUESTIONS, answers)).toEqual(Either.right([
      { question_id: "topic", label: "What is it about?", type: "text", value: "Trim" },
      { question_id: "guests", label: "Guests", type: "number", value: 2.5 },
      { question_id: "length", label: "Hair length", type: "select", value: "Long" },
      { question_id: "extras", label: "Extras", type: "multi_select", value: ["Beard", "Wash"] },
      { question_id: "terms", label: "I accept the terms", type: "checkbox", value: true }
    ]))
  })

  it("reports unknown and repeated questions and every missing required answer, one entry per answer", () => {
    expect(errorsOf([
      { question_id: "colour", value: "red" },
      { question_id: "length", value: "Short" },
      { question_id: "length", value: "Long" }
    ])).toEqual([
      { path: "answers.colour", message: "is not a question of this service" },
      { path: "answers.length", message: "is answered more than once" },
      { path: "answers.topic", message: "is required" },
      { path: "answers.terms", message: "must be checked" }
    ])
  })

  it("refuses values of the wrong type for each kind of question", () => {
    expect(errorsOf([
      { question_id: "topic", value: 42 },
      { question_id: "guests", value: "3" },
      { question_id: "length", value: ["Long"] },
      { question_id: "extras", value: "Wash" },
      { question_id: "terms", value: "yes" }
    ])).toEqual([
      { path: "answers.topic", message: "must be text" },
      { path: "answers.guests", message: "must be a number" },
      { path: "answers.length", message: "must be one of: Short, Long" },
      { path: "answers.extras", message: "must be a list of options from: Wash, Beard, Colour" },
      { path: "answers.terms", message: "must be true or false" }
    ])
  })

  it("refuses options not offered, repeated options, long text, bad emails and phones, and an unchecked required box", () => {
    expect(errorsOf([
      { question_id: "topic", value: "x".repeat(2001) },
      { question_id: "contact", value: "not-an-email" },
      { question_id: "mobile", value: "call me" },
      { question_id: "length", value: "Medium" },
      { question_id: "extras", value: ["Wash", "Wash"] },
      { question_id: "terms", value: false }
    ])).toEqual([
      { path: "answers.topic", message: "must be at most 2000 characters" },
      { path: "answers.contact", message: "must be an email address" },
      { path: "answers.mobile", message: "must be a phone number" },
      { path: "answers.length", message: "must be one of: Short, Long" },
      { path: "answers.extras", message: "must name each option at most once" },
      { path: "answers.terms", message: "must be checked" }
    ])
    expect(errorsOf([...valid, { question_id: "extras", value: ["Wash", "Nails"] }])).toEqual([
      { path: "answers.extras", message: "must be a list of options from: Wash, Beard, Colour" }
    ])
    expect(errorsOf([{ ...valid[0]!, value: "x".repeat(2000) }, ...valid.slice(1)])).toEqual([])
  })

  it("accepts an unchecked optional checkbox as an answer", () => {
    const questions: ReadonlyArray<Question> = [{ id: "news", label: "Newsletter", type: "checkbox", required: false }]
    expect(checkAnswers(questions, [{ question_id: "news", value: false }])).toEqual(
      Either.right([{ question_id: "news", label: "Newsletter", type: "checkbox", value: false }])
    )
  })
})

describe("question definitions", () => {
  it.effect("are kept on the service and default to none", () =>
    Effect.gen(function*() {
      const s = yield* core
      const { serviceId } = yield* salonIn()
      expect((yield* s.services.get(serviceId)).questions).toEqual([])
      const updated = yield* s.services.update(serviceId, { questions: QUESTIONS })
      expect(updated.questions).toEqual(QUESTIONS)
    }).pipe(Effect.provide(CoreTest)))

  it.effect("name the offending field and what is allowed", () =>
    Effect.gen(function*() {
      const s = yield* core
      const { serviceId } = yield* salonIn()
      const error = yield* refusal(s.services.update(serviceId, {
        questions: [
          { id: "Topic!", label: " ", type: "text", required: true },
          { id: "size", label: "Size", type: "select", required: false },
          { id: "note", label: "Note", type: "text", required: false, options: ["a"] },
          { id: "pick", label: "Pick", type: "multi_select", required: false, options: ["a", "b", "a"] },
          { id: "pick", label: "Again", type: "date", required: false } as any,
          { id: "many", label: "Many", type: "select", required: false, options: [] }
        ]
      }))
      expect(error.code).toBe("validation_failed")
      expect(error.errors).toEqual(expect.arrayContaining([
        { path: "questions.0.id", message: "must be 1 to 40 lower-case letters, digits or _" },
        { path: "questions.0.label", message: "must not be empty" },
        { path: "questions.1.options", message: "is required for a select question: 1 to 50 distinct strings" },
        { path: "questions.2.options", message: "is allowed only for select and multi_select questions" },
        { path: "questions.3.options.2", message: "repeats an earlier option" },
        {
          path: "questions.4.type",
          message: expect.stringContaining("one of text, long_text, email, phone, number, select, multi_select, checkbox")
        },
        { path: "questions.5.options", message: "must not be empty" }
      ]))
      const repeated = yield* refusal(s.services.update(serviceId, {
        questions: [QUESTIONS[0]!, { ...QUESTIONS[1]!, id: "topic" }]
      }))
      expect(repeated.errors).toEqual([{ path: "questions.1.id", message: "repeats the question id topic" }])
      const tooMany = yield* refusal(s.services.update(serviceId, {
        questions: Array.from({ length: 21 }, (_, i) => ({ id: `q${i}`, label: `Q${i}`, type: "text" as const, required: false }))
      }))
      expect(tooMany.errors).toEqual([{ path: "questions", message: "must have at most 20 items" }])
      expect((yield* s.services.get(serviceId)).questions).toEqual([])
    }).pipe(Effect.provide(CoreTest)))
})

describe("answers on bookings", () => {
  it.effect("are stored as a snapshot that later edits of the questions do not change, and carried in the event", () =>
    Effect.gen(function*() {
      const s = yield* core
      const { serviceId, staffId, clientId } = yield* salonIn({ questions: QUESTIONS })
      const booking = yield* s.bookings.create({
        service_id: serviceId,
        staff_id: staffId,
        client_id: clientId,
        start: MONDAY_9,
        answers: valid
      })
      const expected = [
        { question_id: "topic", label: "What is it about?", type: "text", value: "Trim" },
        { question_id: "length", label: "Hair length", type: "select", value: "Long" },
        { question_id: "terms", label: "I accept the terms", type: "checkbox", value: true }
      ]
      expect(booking.answers).toEqual(expected)
      yield* s.services.update(serviceId, { questions: [{ ...QUESTIONS[0]!, label: "Topic" }] })
      expect((yield* s.bookings.get(booking.id)).answers).toEqual(expected)
      expect((yield* s.bookings.list({ service_id: serviceId })).data[0]!.answers).toEqual(expected)
      const [created] = (yield* s.events.list({ types: ["booking.created"] })).data
      expect((created!.data.object as typeof booking).answers).toEqual(expected)
    }).pipe(Effect.provide(CoreTest)))

  it.effect("are empty for a service without questions, which refuses any answer", () =>
    Effect.gen(function*() {
      const s = yield* core
      const { serviceId, staffId, clientId } = yield* salonIn()
      const booking = yield* s.bookings.create({ service_id: serviceId, staff_id: staffId, client_id: clientId, start: MONDAY_9 })
      expect(booking.answers).toEqual([])
      expect(
        yield* refusal(s.bookings.create({
          service_id: serviceId,
          staff_id: staffId,
          client_id: clientId,
          start: at(MONDAY_9, 60),
          answers: [{ question_id: "topic", value: "x" }]
        }))
      ).toMatchObject({ code: "validation_failed", errors: [{ path: "answers.topic", message: "is not a question of this service" }] })
    }).pipe(Effect.provide(CoreTest)))

  it.effect("that are refused leave no client, no booking, no converted hold and no event behind", () =>
    Effect.gen(function*() {
      const s = yield* core
      const { serviceId, staffId } = yield* salonIn({ questions: QUESTIONS })
      const hold = yield* s.availability.hold({ service_id: serviceId, staff_id: staffId, start: MONDAY_9 })
      const eventsBefore = (yield* s.events.list({ limit: 100 })).data.length
      const clientsBefore = (yield* s.clients.list()).data.length
      const error = yield* refusal(s.bookings.create({
        service_id: serviceId,
        start: MONDAY_9,
        hold_id: hold.id,
        client: { name: "Cy", email: "cy@example.com" },
        answers: [{ question_id: "length", value: "Medium" }]
      }))
      expect(error).toMatchObject({ code: "validation_failed", status: 422 })
      expect(error.errors).toEqual([
        { path: "answers.topic", message: "is required" },
        { path: "answers.length", message: "must be one of: Short, Long" },
        { path: "answers.terms", message: "must be checked" }
      ])
      expect((yield* s.clients.list()).data.length).toBe(clientsBefore)
      expect((yield* s.bookings.list()).data).toEqual([])
      expect(yield* s.availability.getHold(hold.id)).toMatchObject({ id: hold.id })
      expect((yield* s.events.list({ limit: 100 })).data.length).toBe(eventsBefore)
    }).pipe(Effect.provide(CoreTest)))

  it.effect("can be replaced by PATCH with the same checks against the current questions, and survive a reschedule", () =>
    Effect.gen(function*() {
      const s = yield* core
      const { serviceId, staffId, clientId } = yield* salonIn({ questions: QUESTIONS })
      const booking = yield* s.bookings.create({
        service_id: serviceId,
        staff_id: staffId,
        client_id: clientId,
        start: MONDAY_9,
        answers: valid
      })
      expect(yield* refusal(s.bookings.update(booking.id, { answers: [{ question_id: "topic", value: "Colour" }] }))).toMatchObject({
        code: "validation_failed",
        errors: [{ path: "answers.length", message: "is required" }, { path: "answers.terms", message: "must be checked" }]
      })
      const changed = yield* s.bookings.update(booking.id, { answers: [{ question_id: "topic", value: "Colour" }, ...valid.slice(1)] })
      expect(changed.answers[0]).toEqual({ question_id: "topic", label: "What is it about?", type: "text", value: "Colour" })
      const updated = (yield* s.events.list({ types: ["booking.updated"] })).data
      expect(updated.map((e) => (e.data.object as typeof booking).answers[0]!.value)).toEqual(["Colour"])
      const moved = yield* s.bookings.reschedule(booking.id, { start: at(MONDAY_9, 60) })
      expect(moved.answers).toEqual(changed.answers)
    }).pipe(Effect.provide(CoreTest)))
})
