/**
 * Payments received for a booking (docs/api.md §3 Payments): each one is stored, adds to what the
 * booking has paid and sets its payment status, with `payment.received`, in one change.
 * `Bookings` offers them as `recordPayment` and `listPayments`.
 */
import { Effect } from "effect"
import { type Booking, paymentStatusOf } from "../bookings/booking.js"
import { ValidationFailed } from "../domain/errors.js"
import { type Payment, PaymentCreate } from "./payment.js"
import { Events } from "../events/Events.js"
import { findOr404, newResource } from "../internal/resources.js"
import { decodeInput } from "../domain/validation.js"
import { BookingsCollection } from "../bookings/collections.js"
import { PaymentsCollection } from "./collections.js"
import { Storage } from "../ports/storage.js"

export class Payments extends Effect.Service<Payments>()("slotwise/Payments", {
  effect: Effect.gen(function*() {
    const storage = yield* Storage
    const events = yield* Events
    const bookings = storage.collection(BookingsCollection)
    const payments = storage.collection(PaymentsCollection)
    const findBooking = findOr404(bookings, "booking")
    const decodePayment = decodeInput(PaymentCreate)

    /** Records a payment received for booking `bookingId` and updates what it has paid. */
    const record = (bookingId: string, input: typeof PaymentCreate.Encoded) =>
      Effect.gen(function*() {
        const fields = yield* decodePayment(input)
        if (fields.amount.amount <= 0) {
          return yield* new ValidationFailed({
            detail: "amount.amount must be greater than 0",
            errors: [{ path: "amount.amount", message: "must be greater than 0" }]
          })
        }
        return yield* events.mutate(Effect.gen(function*() {
          const current = yield* findBooking(bookingId)
          const currency = current.price?.currency ?? current.amount_paid?.currency
          if (currency !== undefined && currency !== fields.amount.currency) {
            return yield* new ValidationFailed({
              detail: `booking ${bookingId} is priced in ${currency}`,
              errors: [{ path: "amount.currency", message: `must be ${currency}, the booking's currency` }]
            })
          }
          const paid = (current.amount_paid?.amount ?? 0) + fields.amount.amount
          const payment: Payment = {
            ...(yield* newResource("payment")),
            object: "payment",
            booking_id: current.id,
            amount: fields.amount,
            reference: fields.reference ?? null,
            metadata: fields.metadata ?? {}
          }
          const booking: Booking = {
            ...current,
            amount_paid: { amount: paid, currency: fields.amount.currency },
            payment_status: paymentStatusOf(current.price?.amount ?? null, paid),
            updated_at: payment.created_at
          }
          yield* payments.insert(payment)
          yield* bookings.update(booking)
          yield* events.record("payment.received", payment, { booking })
          return { payment, booking }
        }))
      })

    /** Every payment of booking `bookingId` (`not_found` for an unknown booking). */
    const list = (bookingId: string) =>
      Effect.gen(function*() {
        yield* findBooking(bookingId)
        const data = yield* payments.list({ where: [{ column: "booking_id", op: "eq", value: bookingId }] })
        return { object: "list" as const, data, has_more: false, next_cursor: null }
      })

    return { record, list } as const
  })
}) {}
