/** Bookings: CRUD, the status actions and payments (docs/api.md §3). */
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { BookingListParams } from "../../../src/Bookings.js"
import { Booking, BookingCancel, BookingCreate, BookingReschedule, BookingUpdate, PublicBooking } from "../../../src/domain/booking.js"
import { Payment, PaymentCreate } from "../../../src/domain/payment.js"
import { BookingSeries, PublicBookingSeries } from "../../../src/domain/series.js"
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
import { Authentication } from "./security.js"

export const PaymentRecorded = Schema.Struct({ payment: Payment, booking: Booking }).annotations({
  identifier: "PaymentRecorded"
})

export const BookingListQuery = queryOf(BookingListParams)

/** A `201` body; each member of a union carries the status (the document lists them one by one). */
const created = <A, I>(member: Schema.Schema<A, I>) => member.annotations(HttpApiSchema.annotations<A>({ status: 201 }))

/** What a create answers: the booking, or with `recurrence` the series; a publishable key gets the public view of either. */
export const BookingCreated = created(Booking)
export const PublicBookingCreated = created(PublicBooking)
export const BookingSeriesCreated = created(BookingSeries)
export const PublicBookingSeriesCreated = created(PublicBookingSeries).annotations({
  description: "The booking; with `recurrence`, the `booking_series` with its occurrences and skipped starts. " +
    "A publishable key gets public views, without the client, notes, metadata or payments"
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
  .add(
    HttpApiEndpoint.post("create", "/v1/bookings")
      .setPayload(body(BookingCreate))
      // A publishable key gets its public view.
      // The response's description is its last member's: it names both.
      .addSuccess(Schema.Union(BookingCreated, PublicBookingCreated, BookingSeriesCreated, PublicBookingSeriesCreated))
      .annotateContext(doc(
        "Book a slot, or a recurring series with `recurrence` (atomic check and write)",
        key("bookings:write", { publishable: true })
      ))
  )
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
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Bookings")
  .annotate(OpenApi.Description, "Appointments of a client with a staff member for a service: booking, status changes, rescheduling and payments.")
