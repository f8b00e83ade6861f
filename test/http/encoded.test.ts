import { describe, expect, it } from "vitest"
import { Either, Schema } from "effect"
import { BookingCreated, BookingSeriesCreated, PublicBookingCreated } from "../../adapters/http/contract/bookings.js"
import { fastEncoder } from "../../adapters/http/handlers/encoded.js"

const booking = {
  id: "bkg_01M8B2T29SCPYNJ20DZH4SX9AF",
  object: "booking",
  service_id: "svc_01M8B2T29AS2ZC15EG8Q9D0V90",
  staff_id: "stf_01M8B2T28Z2CMZMJ1JT9MTVZZE",
  staff_ids: ["stf_01M8B2T28Z2CMZMJ1JT9MTVZZE"],
  assigned_by: "chosen",
  client_id: "cli_01M8B2T29WKFMPC00DE46ZGGMY",
  start: "2027-03-29T09:00:00Z",
  end: "2027-03-29T09:30:00Z",
  status: "confirmed",
  notes: "hi",
  cancellation_reason: null,
  price: { amount: 1000, currency: "EUR" },
  amount_paid: null,
  payment_status: "unpaid",
  rescheduled_from: null,
  buffer_before_minutes: 0,
  buffer_after_minutes: 5,
  answers: [
    { question_id: "q1", label: "Name", type: "text", value: "v" },
    { question_id: "q2", label: "Pick", type: "multi_select", value: ["a", "b"] },
    { question_id: "q3", label: "How many", type: "number", value: 3 },
    { question_id: "q4", label: "Agree", type: "checkbox", value: true }
  ],
  series_id: null,
  metadata: { a: "b", 1: "one" },
  manage_version: 1,
  manage_url: "http://127.0.0.1:8080/manage/token",
  created_at: "2026-11-26T04:46:19.961Z",
  updated_at: "2026-11-26T04:46:19.961Z"
} as const

/** Both encoders' answers as text: the JSON of a value, or the error's message. */
const answers = <A, I>(schema: Schema.Schema<A, I>, value: unknown) =>
  [Schema.encodeEither(schema)(value as A), fastEncoder(schema)(value as A)].map((result) =>
    Either.isRight(result) ? JSON.stringify(result.right) : `refused: ${result.left.message}`
  )

const expectSame = <A, I>(schema: Schema.Schema<A, I>, value: unknown) => {
  const [own, fast] = answers(schema, value)
  expect(fast).toBe(own)
  return own!
}

describe("the compiled encoder answers as the schema's own", () => {
  it("a booking, its public view and a series: the same JSON, key for key", () => {
    expect(expectSame(BookingCreated, booking)).toBe(JSON.stringify(booking))
    expect(JSON.parse(expectSame(PublicBookingCreated, booking))).not.toHaveProperty("client_id")
    const series = {
      id: "ser_01M8B2RYHGX59AGPJMNYDKSCDC",
      object: "booking_series",
      service_id: booking.service_id,
      staff_id: booking.staff_id,
      client_id: booking.client_id,
      staff_ids: booking.staff_ids,
      assigned_by: "chosen",
      rule: "FREQ=WEEKLY;COUNT=2",
      time_zone: "Europe/Berlin",
      on_conflict: "skip",
      skipped: [{ start: "2027-04-05T09:00:00Z", reasons: [{ code: "outside_hours", detail: "closed", staff_id: booking.staff_id }] }],
      metadata: {},
      occurrences: [booking, { ...booking, id: "bkg_01M8B2T29SCPYNJ20DZH4SX9AG", series_id: "ser_01M8B2RYHGX59AGPJMNYDKSCDC" }],
      created_at: booking.created_at,
      updated_at: booking.updated_at
    }
    expect(expectSame(BookingSeriesCreated, series)).not.toMatch(/^refused/)
  })

  it("leaves out what the schema does not name, and metadata keys its rules refuse", () => {
    const odd = { ...booking, extra: 1, price: { amount: 5, currency: "EUR", rate: 2 }, metadata: { "": "x", ["k".repeat(41)]: "y", ok: "z" } }
    const json = JSON.parse(expectSame(BookingCreated, odd))
    expect(json).not.toHaveProperty("extra")
    expect(json.price).toEqual({ amount: 5, currency: "EUR" })
    expect(json.metadata).toEqual({ ok: "z" })
  })

  it("refuses what the schema refuses, with the schema's own error", () => {
    for (
      const bad of [
        { ...booking, id: "bkg_nope" },
        { ...booking, metadata: { a: 1 } },
        { ...booking, revision: undefined },
        { ...booking, price: { amount: -1, currency: "EUR" } },
        { ...booking, start: 5 },
        { ...booking, answers: [{ question_id: "q", label: "L", type: "checkboxes", value: "v" }] },
        { ...booking, notes: "\u0000" },
        null
      ]
    ) expect(expectSame(BookingCreated, bad)).toMatch(/^refused: /)
  })

  it("follows a transformation's encoding and a union Effect tries by its tags", () => {
    const Tagged = Schema.Union(
      Schema.Struct({ kind: Schema.Literal("a"), n: Schema.NumberFromString }),
      Schema.Struct({ kind: Schema.Literal("b"), n: Schema.Number })
    )
    expectSame(Tagged, { kind: "b", n: 2 })
    expectSame(Tagged, { kind: "a", n: 2 })
    expectSame(Schema.Struct({ n: Schema.NumberFromString, tz: Schema.Trim }), { n: 1.5, tz: "x" })
    expectSame(Schema.Struct({ n: Schema.NumberFromString }), { n: "1" })
  })
})
