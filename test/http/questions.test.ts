/**
 * Booking questions over HTTP: definitions on services, answers on bookings (create, read,
 * list, PATCH, reschedule), 422s per answer, what a publishable key reads, and the answers in
 * events and webhook deliveries.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startReceiver, waitFor } from "../webhooks/receiver.js"
import { client, type Client, expectProblem, expectStatus, MONDAY_9, newAccount, seed, startServer, type TestServer } from "./harness.js"

const ORIGIN = "https://shop.example.com"
const QUESTIONS = [
  { id: "topic", label: "What is it about?", type: "text", required: true, help: "A few words" },
  { id: "length", label: "Hair length", type: "select", required: true, options: ["Short", "Long"] },
  { id: "extras", label: "Extras", type: "multi_select", required: false, options: ["Wash", "Beard"] },
  { id: "guests", label: "Guests", type: "number", required: false },
  { id: "terms", label: "I accept the terms", type: "checkbox", required: true }
]
const ANSWERS = [
  { question_id: "topic", value: "Trim" },
  { question_id: "length", value: "Long" },
  { question_id: "extras", value: ["Beard"] },
  { question_id: "terms", value: true }
]
const STORED = [
  { question_id: "topic", label: "What is it about?", type: "text", value: "Trim" },
  { question_id: "length", label: "Hair length", type: "select", value: "Long" },
  { question_id: "extras", label: "Extras", type: "multi_select", value: ["Beard"] },
  { question_id: "terms", label: "I accept the terms", type: "checkbox", value: true }
]

let server: TestServer
beforeAll(async () => {
  server = await startServer({ allowPrivateWebhooks: true })
})
afterAll(() => server.close())

/** A fresh account whose service asks QUESTIONS. */
const setup = async () => {
  const created = await newAccount(server, { allowed_origins: [ORIGIN] })
  const api = client(server.url, created.keys.sandbox.secret)
  const s = await seed(api)
  const service = expectStatus(
    await api.patch(`/v1/services/${s.service.id}`, { questions: QUESTIONS, metadata: { cost_centre: "42" } }),
    200
  )
  return { api, widget: client(server.url, created.keys.sandbox.publishable), ...s, service }
}

const book = (
  api: Client,
  s: { service: { id: string }; staff: { id: string }; client: { id: string } },
  answers: unknown,
  start = MONDAY_9
) => api.post("/v1/bookings", { service_id: s.service.id, staff_id: s.staff.id, client_id: s.client.id, start, answers })

describe("questions on services", () => {
  it("are returned as defined, and an invalid definition is a 422 naming the field and what is allowed", async () => {
    const s = await setup()
    expect(s.service.questions).toEqual(QUESTIONS)
    const bad = expectProblem(
      await s.api.patch(`/v1/services/${s.service.id}`, {
        questions: [QUESTIONS[0], QUESTIONS[1], { id: "note", label: "Note", type: "text", required: false, options: ["a"] }]
      }),
      422,
      "validation_failed"
    )
    expect(bad.errors).toEqual([{ path: "questions.2.options", message: "is allowed only for select and multi_select questions" }])
    const created = expectProblem(
      await s.api.post("/v1/services", {
        name: "Colour",
        duration_minutes: 60,
        questions: [{ id: "shade", label: "Shade", type: "select", required: true }]
      }),
      422,
      "validation_failed"
    )
    expect(created.errors).toEqual([{
      path: "questions.0.options",
      message: "is required for a select question: 1 to 50 distinct strings"
    }])
  })

  it("are read by a publishable key, which never sees the service's metadata", async () => {
    const s = await setup()
    const from = { headers: { origin: ORIGIN } }
    const one = expectStatus(await s.widget.get(`/v1/services/${s.service.id}`, from), 200)
    expect(one).toMatchObject({ id: s.service.id, questions: QUESTIONS })
    expect(one).not.toHaveProperty("metadata")
    const listed = expectStatus(await s.widget.get("/v1/services", from), 200)
    expect(listed.data).toEqual([one])
    expect(expectStatus(await s.api.get(`/v1/services/${s.service.id}`), 200).metadata).toEqual({ cost_centre: "42" })
  })
})

describe("answers on bookings", () => {
  it("are stored with each question's label and type, read back, listed, and kept through a reschedule", async () => {
    const s = await setup()
    const booking = expectStatus(await book(s.api, s, ANSWERS), 201)
    expect(booking.answers).toEqual(STORED)
    expect(expectStatus(await s.api.get(`/v1/bookings/${booking.id}`), 200).answers).toEqual(STORED)
    expect(expectStatus(await s.api.get(`/v1/bookings?service_id=${s.service.id}`), 200).data[0].answers).toEqual(STORED)
    const moved = expectStatus(await s.api.post(`/v1/bookings/${booking.id}/reschedule`, { start: "2027-03-29T10:00:00Z" }), 200)
    expect(moved.answers).toEqual(STORED)
  })

  it("that are wrong get one 422 entry per answer at answers.<question_id>, and nothing is written", async () => {
    const s = await setup()
    const hold = expectStatus(
      await s.widget.post("/v1/availability/holds", { service_id: s.service.id, staff_id: s.staff.id, start: MONDAY_9 }, {
        headers: { origin: ORIGIN }
      }),
      201
    )
    const eventsBefore = expectStatus(await s.api.get("/v1/events?limit=100"), 200).data.length
    const refused = expectProblem(
      await s.widget.post("/v1/bookings", {
        service_id: s.service.id,
        start: MONDAY_9,
        hold_id: hold.id,
        client: { name: "Web", email: "web@example.com" },
        answers: [
          { question_id: "topic", value: "x".repeat(2001) },
          { question_id: "length", value: "Medium" },
          { question_id: "extras", value: "Wash" },
          { question_id: "guests", value: "two" },
          { question_id: "colour", value: "red" }
        ]
      }, { headers: { origin: ORIGIN } }),
      422,
      "validation_failed"
    )
    expect(refused.errors).toEqual([
      { path: "answers.colour", message: "is not a question of this service" },
      { path: "answers.topic", message: "must be at most 2000 characters" },
      { path: "answers.length", message: "must be one of: Short, Long" },
      { path: "answers.extras", message: "must be a list of options from: Wash, Beard" },
      { path: "answers.guests", message: "must be a number" },
      { path: "answers.terms", message: "must be checked" }
    ])
    expect(expectStatus(await s.api.get("/v1/clients"), 200).data.map((c: { email: string }) => c.email)).toEqual(["bob@example.com"])
    expect(expectStatus(await s.api.get(`/v1/availability/holds/${hold.id}`), 200).id).toBe(hold.id)
    expect(expectStatus(await s.api.get("/v1/bookings"), 200).data).toEqual([])
    expect(expectStatus(await s.api.get("/v1/events?limit=100"), 200).data.length).toBe(eventsBefore)
    // A value of no answer kind at all is reported at its answer too, in the question's terms.
    const odd = expectProblem(
      await book(s.api, s, [{ question_id: "topic", value: { text: "Trim" } }, ...ANSWERS.slice(1, 3), {
        question_id: "terms",
        value: null
      }]),
      422,
      "validation_failed"
    )
    expect(odd.errors).toEqual([{ path: "answers.topic", message: "must be text" }, {
      path: "answers.terms",
      message: "must be true or false"
    }])
  })

  it("can be replaced by PATCH, checked against the questions as they are now, emitting booking.updated", async () => {
    const s = await setup()
    const booking = expectStatus(await book(s.api, s, ANSWERS), 201)
    expectStatus(
      await s.api.patch(`/v1/services/${s.service.id}`, {
        questions: [...QUESTIONS, { id: "allergies", label: "Allergies", type: "long_text", required: true }]
      }),
      200
    )
    const refused = expectProblem(await s.api.patch(`/v1/bookings/${booking.id}`, { answers: ANSWERS }), 422, "validation_failed")
    expect(refused.errors).toEqual([{ path: "answers.allergies", message: "is required" }])
    // The stored snapshot is untouched by the edit of the questions and by the refused PATCH.
    expect(expectStatus(await s.api.get(`/v1/bookings/${booking.id}`), 200).answers).toEqual(STORED)
    const changed = expectStatus(
      await s.api.patch(`/v1/bookings/${booking.id}`, {
        answers: [...ANSWERS, { question_id: "allergies", value: "None" }]
      }),
      200
    )
    expect(changed.answers).toEqual([...STORED, { question_id: "allergies", label: "Allergies", type: "long_text", value: "None" }])
    const events = expectStatus(await s.api.get("/v1/events?types=booking.updated"), 200).data
    expect(events.map((e: any) => e.data.object.answers.length)).toEqual([5])
  })

  it("are carried in the booking.created webhook payload", async () => {
    const s = await setup()
    const rx = await startReceiver()
    try {
      expectStatus(await s.api.post("/v1/webhooks", { url: rx.url, events: ["booking.created"] }), 201)
      const booking = expectStatus(await book(s.api, s, ANSWERS), 201)
      await waitFor(() => rx.received.length === 1, 20_000, "the booking.created delivery")
      const payload = JSON.parse(rx.received[0]!.body)
      expect(payload.data.object).toMatchObject({ id: booking.id, answers: STORED })
    } finally {
      await rx.close()
    }
  })
})
