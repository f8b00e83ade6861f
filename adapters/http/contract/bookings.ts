/** Bookings: CRUD, the status actions and payments (docs/api.md §3). */
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { BookingListParams } from "../../../src/bookings/Bookings.js"
import { Booking, BookingCancel, BookingCreate, BookingReschedule, BookingUpdate, PublicBooking } from "../../../src/bookings/booking.js"
import { Payment, PaymentCreate } from "../../../src/payments/payment.js"
import { doc, key } from "./access.js"
import { body, IdPath, NoFields, pageOf } from "./common.js"
import {
  HoldExpiredProblem,
  InvalidTransitionProblem,
  OutsideAvailabilityProblem,
  SeriesUnavailableProblem,
  SlotUnavailableProblem
} from "./problems.js"
import { queryOf } from "./query.js"
import { authenticated } from "./security.js"

export const PaymentRecorded = Schema.Struct({ payment: Payment, booking: Booking }).annotations({
  identifier: "PaymentRecorded"
})

export const BookingListQuery = queryOf(BookingListParams)

/** A `201` body; each member of a union carries the status (the document lists them one by one). */
export const created = <A, I>(member: Schema.Schema<A, I>) => member.annotations(HttpApiSchema.annotations<A>({ status: 201 }))

/**
 * A create a publishable key may call too (the widget's): 201 with what the account sees or,
 * for a visitor, the public view. The response's description is the first member's that has one.
 */
export const createAlsoForVisitors = <
  const Path extends `/${string}`,
  P extends Schema.Schema.AnyNoContext,
  A,
  AI,
  V,
  VI
>(path: Path, payload: P, success: readonly [Schema.Schema<A, AI>, Schema.Schema<V, VI>], summary: string) =>
  HttpApiEndpoint.post("create", path)
    .setPayload(body(payload))
    .addSuccess(Schema.Union(...success))
    .annotateContext(doc(summary, key("bookings:write", { publishable: true })))

/**
 * What a create answers: the booking; a publishable key gets its public view. A body with
 * `recurrence` is still answered with the series (the series' own path is documented for it).
 */
export const BookingCreated = created(Booking)
export const PublicBookingCreated = created(PublicBooking).annotations({
  description: "The booking. A publishable key gets its public view, without the client, notes, metadata or payments"
})

const read = key("bookings:read")
const write = key("bookings:write")

const action = <const Name extends string>(name: Name, path: string, summary: string) =>
  HttpApiEndpoint.post(name, `/v1/bookings/:id/${path}`)
    .setPath(IdPath)
    .setPayload(NoFields)
    .addSuccess(Booking)
    .annotateContext(doc(summary, write))

export const BookingsGroup = HttpApiGroup.make("bookings")
  .add(
    HttpApiEndpoint.get("list", "/v1/bookings")
      .setUrlParams(BookingListQuery)
      .addSuccess(pageOf(Booking, "BookingList"))
      .annotateContext(doc(
        "List bookings by start (filters may also come as a JSON body on the GET; the query wins)",
        read
      ))
  )
  .add(createAlsoForVisitors(
    "/v1/bookings",
    BookingCreate,
    [BookingCreated, PublicBookingCreated],
    "Book a slot (atomic check and write); a series is booked with POST /v1/booking-series"
  ))
  .add(
    HttpApiEndpoint.get("get", "/v1/bookings/:id")
      .setPath(IdPath)
      .addSuccess(Booking)
      .annotateContext(doc("Read a booking", read))
  )
  .add(
    HttpApiEndpoint.patch("update", "/v1/bookings/:id")
      .setPath(IdPath)
      .setPayload(body(BookingUpdate))
      .addSuccess(Booking)
      .annotateContext(doc("Update a booking (status per the table; start or staff_id reschedules)", write))
  )
  .add(
    HttpApiEndpoint.del("delete", "/v1/bookings/:id")
      .setPath(IdPath)
      .addSuccess(Booking)
      .annotateContext(doc("Cancel a booking (idempotent); the record stays", write))
  )
  .add(action("confirm", "confirm", "Confirm a pending booking"))
  .add(
    HttpApiEndpoint.post("cancel", "/v1/bookings/:id/cancel")
      .setPath(IdPath)
      .setPayload(body(BookingCancel))
      .addSuccess(Booking)
      .annotateContext(doc("Cancel a pending or confirmed booking", write))
  )
  .add(
    HttpApiEndpoint.post("reschedule", "/v1/bookings/:id/reschedule")
      .setPath(IdPath)
      .setPayload(body(BookingReschedule))
      .addSuccess(Booking)
      .annotateContext(doc("Move a booking to a new start (and staff member)", write))
  )
  .add(action("complete", "complete", "Mark a confirmed booking completed (after its start)"))
  .add(action("noShow", "no-show", "Mark a confirmed booking a no-show (after its start)"))
  .add(
    HttpApiEndpoint.post("recordPayment", "/v1/bookings/:id/payments")
      .setPath(IdPath)
      .setPayload(body(PaymentCreate))
      .addSuccess(PaymentRecorded, { status: 201 })
      .annotateContext(doc("Record a payment received for a booking", write))
  )
  .add(
    HttpApiEndpoint.get("listPayments", "/v1/bookings/:id/payments")
      .setPath(IdPath)
      .addSuccess(pageOf(Payment, "PaymentList"))
      .annotateContext(doc("List the payments of a booking", read))
  )
  .addError(SlotUnavailableProblem)
  .addError(OutsideAvailabilityProblem)
  .addError(InvalidTransitionProblem)
  .addError(HoldExpiredProblem)
  .addError(SeriesUnavailableProblem)
  .pipe(authenticated)
  .annotate(OpenApi.Title, "Bookings")
  .annotate(
    OpenApi.Description,
    "Appointments of a client with a staff member for a service: booking, status changes, rescheduling and payments."
  )
