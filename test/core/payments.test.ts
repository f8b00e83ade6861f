/** Payments (docs/api.md §3): what a booking has paid, its payment status and `payment.received`. */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { core, CoreTest, refusal, salonIn } from "../support/coreTest.js"
import { MONDAY_9 } from "../support/fixtures.js"

describe("payments", () => {
  it.effect("tracks amount_paid and payment_status and emits payment.received with payment and booking", () =>
    Effect.gen(function*() {
      const s = yield* core
      const { serviceId, staffId, clientId } = yield* salonIn()
      const booking = yield* s.bookings.create({ service_id: serviceId, staff_id: staffId, client_id: clientId, start: MONDAY_9 })
      const heard: Array<string> = []
      s.events.subscribe((e) => heard.push(e.type))
      const partial = yield* s.bookings.recordPayment(booking.id, { amount: { amount: 1500, currency: "EUR" }, reference: "pi_123" })
      expect(partial.payment).toMatchObject({
        object: "payment",
        booking_id: booking.id,
        amount: { amount: 1500, currency: "EUR" },
        reference: "pi_123"
      })
      expect(partial.booking).toMatchObject({ amount_paid: { amount: 1500, currency: "EUR" }, payment_status: "partially_paid" })
      const full = yield* s.bookings.recordPayment(booking.id, { amount: { amount: 2500, currency: "EUR" } })
      expect(full.booking).toMatchObject({ amount_paid: { amount: 4000, currency: "EUR" }, payment_status: "paid" })
      expect(heard).toEqual(["payment.received", "payment.received"])
      const [event] = (yield* s.events.list({ types: ["payment.received"] })).data
      expect(event!.data.object).toEqual(partial.payment)
      expect(event!.data.booking).toEqual(partial.booking)
      expect((yield* s.bookings.listPayments(booking.id)).data).toHaveLength(2)
      expect(yield* refusal(s.bookings.recordPayment(booking.id, { amount: { amount: 100, currency: "USD" } }))).toMatchObject({
        code: "validation_failed",
        errors: [{ path: "amount.currency" }]
      })
      expect(yield* refusal(s.bookings.recordPayment(booking.id, { amount: { amount: 0, currency: "EUR" } }))).toMatchObject({
        errors: [{ path: "amount.amount" }]
      })
      expect((yield* s.bookings.get(booking.id)).amount_paid).toEqual({ amount: 4000, currency: "EUR" })
    }).pipe(Effect.provide(CoreTest)))

  it.effect("lists nothing for a booking without payments, not_found for an unknown booking, and pays an unpriced booking in any currency", () =>
    Effect.gen(function*() {
      const s = yield* core
      const { serviceId, staffId, clientId } = yield* salonIn({ price: null })
      const booking = yield* s.bookings.create({ service_id: serviceId, staff_id: staffId, client_id: clientId, start: MONDAY_9 })
      expect(yield* s.bookings.listPayments(booking.id)).toEqual({ object: "list", data: [], has_more: false, next_cursor: null })
      expect(yield* refusal(s.bookings.listPayments("bkg_00000000000000000000000000"))).toMatchObject({ code: "not_found" })
      expect(yield* refusal(s.bookings.recordPayment("bkg_00000000000000000000000000", { amount: { amount: 100, currency: "EUR" } })))
        .toMatchObject({ code: "not_found" })
      const { booking: paid } = yield* s.bookings.recordPayment(booking.id, { amount: { amount: 700, currency: "USD" } })
      expect(paid).toMatchObject({ price: null, amount_paid: { amount: 700, currency: "USD" }, payment_status: "paid" })
      // Once paid in one currency, the booking takes no other.
      expect(yield* refusal(s.bookings.recordPayment(booking.id, { amount: { amount: 1, currency: "EUR" } }))).toMatchObject({
        errors: [{ path: "amount.currency" }]
      })
    }).pipe(Effect.provide(CoreTest)))
})
