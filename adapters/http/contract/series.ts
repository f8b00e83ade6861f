/** Recurring bookings: a series and its occurrences (docs/api.md §11). Created through POST /v1/bookings. */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { BookingSeries, BookingSeriesCancel } from "../../../src/domain/series.js"
import { BookingSeriesListParams } from "../../../src/RecurringBookings.js"
import { doc, key } from "./access.js"
import { body, IdPath, pageOf } from "./common.js"
import { InvalidTransitionProblem } from "./problems.js"
import { queryOf } from "./query.js"
import { Authentication } from "./security.js"

export const BookingSeriesGroup = HttpApiGroup.make("bookingSeries")
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
  .addError(InvalidTransitionProblem)
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Booking series")
  .annotate(
    OpenApi.Description,
    "Recurring bookings: POST /v1/bookings with `recurrence` books every occurrence of a rule; each is an ordinary booking with `series_id`."
  )
