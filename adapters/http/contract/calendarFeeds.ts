/**
 * Calendar feeds (docs/api.md §12, "Feeds out"): the secret iCalendar URL of a staff member or
 * of the whole account and environment, and the URL itself, which needs no credential.
 */
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { CalendarFeed, CalendarFeedCreated } from "../../../src/calendarFeeds/calendarFeed.js"
import { doc, key, publicAccess } from "./access.js"
import { IdPath, NoFields } from "./common.js"
import { authenticated } from "./security.js"

const staffRead = key("staff:read")
const staffWrite = key("staff:write")
/** The account's feed shows every staff member's bookings: making or ending it needs both scopes. */
const accountWrite = key(["staff:write", "bookings:read"])

const ROTATES = "calling it again makes a new URL and ends the old one at once"

export const CalendarFeedsGroup = HttpApiGroup.make("calendarFeeds")
  .add(
    HttpApiEndpoint.post("createForStaff", "/v1/staff/:id/calendar-feed")
      .setPath(IdPath)
      .setPayload(NoFields)
      .addSuccess(CalendarFeedCreated, { status: 201 })
      .annotateContext(doc(`Make the staff member's secret iCalendar URL (shown only in this answer); ${ROTATES}`, staffWrite))
  )
  .add(
    HttpApiEndpoint.get("getForStaff", "/v1/staff/:id/calendar-feed")
      .setPath(IdPath)
      .addSuccess(CalendarFeed)
      .annotateContext(doc("Whether the staff member has a calendar feed (404 when not); never its URL", staffRead))
  )
  .add(
    HttpApiEndpoint.del("deleteForStaff", "/v1/staff/:id/calendar-feed")
      .setPath(IdPath)
      .addSuccess(CalendarFeed)
      .annotateContext(doc("Turn the staff member's calendar feed off: its URL answers 404 from now on", staffWrite))
  )
  .add(
    HttpApiEndpoint.post("createForAccount", "/v1/calendar-feed")
      .setPayload(NoFields)
      .addSuccess(CalendarFeedCreated, { status: 201 })
      .annotateContext(doc(
        `Make the secret iCalendar URL of every staff member's bookings in this environment (shown only in this answer); ${ROTATES}`,
        accountWrite
      ))
  )
  .add(
    HttpApiEndpoint.get("getForAccount", "/v1/calendar-feed")
      .addSuccess(CalendarFeed)
      .annotateContext(doc("Whether this environment has an account-wide calendar feed (404 when not); never its URL", staffRead))
  )
  .add(
    HttpApiEndpoint.del("deleteForAccount", "/v1/calendar-feed")
      .addSuccess(CalendarFeed)
      .annotateContext(doc("Turn the account-wide calendar feed off: its URL answers 404 from now on", accountWrite))
  )
  .pipe(authenticated)
  .annotate(OpenApi.Title, "Calendar feeds")
  .annotate(
    OpenApi.Description,
    "Secret iCalendar (RFC 5545) URLs that calendar apps subscribe to: a staff member's bookings, or every staff member's."
  )

export const CalendarFeedFile = Schema.Struct({
  file: Schema.String.annotations({ description: "`<token>.ics`, as in the URL the feed was made with" })
})

export const CalendarGroup = HttpApiGroup.make("calendar")
  .add(
    HttpApiEndpoint.get("feed", "/calendar/:file")
      .setPath(CalendarFeedFile)
      .addSuccess(HttpApiSchema.Text({ contentType: "text/calendar" }))
      .annotateContext(doc(
        "A calendar feed's iCalendar text: pending and confirmed bookings from 30 days back to the booking horizon, " +
          "cancelled ones for 30 days after their cancellation. Answers `ETag`, and 304 to a matching `If-None-Match`; " +
          "404 for every URL that opens no feed. Limited per client address",
        publicAccess
      ))
  )
  .annotate(OpenApi.Title, "Calendar")
  .annotate(OpenApi.Description, "The feeds' secret URLs, for calendar apps.")
