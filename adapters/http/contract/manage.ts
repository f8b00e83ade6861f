/**
 * Manage links (docs/api.md §10): rotating a booking's link (the account), and the endpoints
 * the hosted manage page calls with the token as the only credential (no key, no CORS).
 */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { SlotList } from "../../../src/availability/Availability.js"
import { Booking } from "../../../src/bookings/booking.js"
import { ManageCancel, ManagedBooking, ManageReschedule, ManageSlotQuery } from "../../../src/manage/manageLink.js"
import { doc, key, publicAccess } from "./access.js"
import { body, IdPath, NoFields } from "./common.js"
import { InvalidTransitionProblem, NoticePeriodPassedProblem, OutsideAvailabilityProblem, SlotUnavailableProblem } from "./problems.js"
import { strictQuery } from "./query.js"
import { authenticated } from "./security.js"

export const ManageLinksGroup = HttpApiGroup.make("manageLinks")
  .add(
    HttpApiEndpoint.post("rotate", "/v1/bookings/:id/manage-link/rotate")
      .setPath(IdPath)
      .setPayload(NoFields)
      .addSuccess(Booking)
      .annotateContext(doc(
        "Replace the booking's manage link: every earlier link stops working at once; the booking carries the new `manage_url`",
        key("bookings:write")
      ))
  )
  .pipe(authenticated)
  .annotate(OpenApi.Title, "Manage links")
  .annotate(OpenApi.Description, "The link a client uses to see, cancel or move a booking without an account.")

const TokenPath = Schema.Struct({ token: Schema.String })

export const ManageGroup = HttpApiGroup.make("manage")
  .add(
    HttpApiEndpoint.get("get", "/v1/manage/:token")
      .setPath(TokenPath)
      .addSuccess(ManagedBooking)
      .annotateContext(doc("The booking a manage link opens, as its client sees it, and what the client may do", publicAccess))
  )
  .add(
    HttpApiEndpoint.get("slots", "/v1/manage/:token/slots")
      .setPath(TokenPath)
      .setUrlParams(strictQuery(ManageSlotQuery))
      .addSuccess(SlotList)
      .annotateContext(doc("Free starts of the booking's service and staff member in a range (at most 62 days)", publicAccess))
  )
  .add(
    HttpApiEndpoint.post("cancel", "/v1/manage/:token/cancel")
      .setPath(TokenPath)
      .setPayload(body(ManageCancel))
      .addSuccess(ManagedBooking)
      .annotateContext(doc("Cancel the booking as its client (not within the service's cancellation notice)", publicAccess))
  )
  .add(
    HttpApiEndpoint.post("reschedule", "/v1/manage/:token/reschedule")
      .setPath(TokenPath)
      .setPayload(body(ManageReschedule))
      .addSuccess(ManagedBooking)
      .annotateContext(doc("Move the booking to another free start as its client (not within the cancellation notice)", publicAccess))
  )
  .addError(SlotUnavailableProblem)
  .addError(OutsideAvailabilityProblem)
  .addError(InvalidTransitionProblem)
  .addError(NoticePeriodPassedProblem)
  .annotate(OpenApi.Title, "Manage")
  .annotate(
    OpenApi.Description,
    "What the hosted manage page calls: the token in the path is the credential. Any token that opens no booking " +
      "(unknown, rotated, malformed) is the same 404. Limited per client address and per booking."
  )
