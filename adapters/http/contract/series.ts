/**
 * Recurring bookings: a series and its occurrences (docs/api.md §12), booked through
 * POST /v1/booking-series (POST /v1/bookings with `recurrence` still books one, deprecated).
 */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { BookingCreate } from "../../../src/bookings/booking.js"
import { Recurrence } from "../../../src/recurring/recurrence.js"
import { BookingSeries, BookingSeriesCancel, PublicBookingSeries } from "../../../src/recurring/series.js"
import { BookingSeriesListParams } from "../../../src/recurring/RecurringBookings.js"
import { doc, key } from "./access.js"
import { createAlsoForVisitors, created } from "./bookings.js"
import { body, IdPath, pageOf } from "./common.js"
import { InvalidTransitionProblem, OutsideAvailabilityProblem, SeriesUnavailableProblem, SlotUnavailableProblem } from "./problems.js"
import { queryOf } from "./query.js"
import { authenticated } from "./security.js"

const { hold_id: _hold, recurrence: _recurrence, ...bookingFields } = BookingCreate.from.fields

/**
 * A series' create: a booking's create with `recurrence` required and no `hold_id` (a hold
 * reserves one slot). The core checks it as it checks a create with `recurrence`.
 */
export const BookingSeriesCreate = Schema.Struct({
  ...bookingFields,
  recurrence: Recurrence.annotations({ description: "the rule: `start` and every later occurrence of it are booked" })
}).annotations({ identifier: "BookingSeriesCreate" })

/** What a series' create answers: the series; a publishable key gets its public view (the description names both). */
export const BookingSeriesCreated = created(BookingSeries).annotations({
  description: "The `booking_series` with its occurrences and skipped starts. " +
    "A publishable key gets its public view, without the client, notes, metadata or payments"
})
export const PublicBookingSeriesCreated = created(PublicBookingSeries)

export const BookingSeriesGroup = HttpApiGroup.make("bookingSeries")
  .add(createAlsoForVisitors(
    "/v1/booking-series",
    BookingSeriesCreate,
    [BookingSeriesCreated, PublicBookingSeriesCreated],
    "Book a series: `start` and every later occurrence of `recurrence.rule` (atomic check and write)"
  ))
  .add(
    HttpApiEndpoint.get("list", "/v1/booking-series")
      .setUrlParams(queryOf(BookingSeriesListParams))
      .addSuccess(pageOf(BookingSeries, "BookingSeriesList"))
      .annotateContext(doc("List booking series by creation, each with its occurrences", key("bookings:read")))
  )
  .add(
    HttpApiEndpoint.get("get", "/v1/booking-series/:id")
      .setPath(IdPath)
      .addSuccess(BookingSeries)
      .annotateContext(doc("Read a booking series with its occurrences", key("bookings:read")))
  )
  .add(
    HttpApiEndpoint.post("cancel", "/v1/booking-series/:id/cancel")
      .setPath(IdPath)
      .setPayload(body(BookingSeriesCancel))
      .addSuccess(BookingSeries)
      .annotateContext(doc(
        "Cancel the series' pending and confirmed occurrences: all, or those from `from` on (each gets its own booking.cancelled)",
        key("bookings:write")
      ))
  )
  .addError(SlotUnavailableProblem)
  .addError(OutsideAvailabilityProblem)
  .addError(SeriesUnavailableProblem)
  .addError(InvalidTransitionProblem)
  .pipe(authenticated)
  .annotate(OpenApi.Title, "Booking series")
  .annotate(
    OpenApi.Description,
    "Recurring bookings: POST /v1/booking-series books every occurrence of a rule; each is an ordinary booking with `series_id`."
  )
