/** A staff member's external calendars (docs/api.md §12 "Busy time in"). */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { CalendarListParams } from "../../../src/calendars/Calendars.js"
import { Calendar, CalendarCreate } from "../../../src/calendars/calendar.js"
import { doc, key } from "./access.js"
import { body, IdPath, NoFields, pageOf } from "./common.js"
import { queryOf } from "./query.js"
import { authenticated } from "./security.js"

const read = key("staff:read")
const write = key("staff:write")

export const CalendarPath = Schema.Struct({ id: Schema.String, calendar_id: Schema.String })

export const CalendarsGroup = HttpApiGroup.make("calendars")
  .add(
    HttpApiEndpoint.get("list", "/v1/staff/:id/calendars")
      .setPath(IdPath)
      .setUrlParams(queryOf(CalendarListParams))
      .addSuccess(pageOf(Calendar, "CalendarList"))
      .annotateContext(doc("List a staff member's external calendars, each with its last sync and error", read))
  )
  .add(
    HttpApiEndpoint.post("create", "/v1/staff/:id/calendars")
      .setPath(IdPath)
      .setPayload(body(CalendarCreate))
      .addSuccess(Calendar, { status: 201 })
      .annotateContext(doc(
        "Subscribe a staff member to an iCalendar feed (a secret address from Google, Outlook or Apple): its busy " +
          "time blocks slots and bookings like time off. The feed is read within seconds and then every " +
          "`--calendar-sync-minutes`. The address is never shown again (only its host); private, loopback and " +
          "link-local addresses are refused unless the server allows them",
        write
      ))
  )
  .add(
    HttpApiEndpoint.get("get", "/v1/staff/:id/calendars/:calendar_id")
      .setPath(CalendarPath)
      .addSuccess(Calendar)
      .annotateContext(doc("Read an external calendar", read))
  )
  .add(
    HttpApiEndpoint.del("delete", "/v1/staff/:id/calendars/:calendar_id")
      .setPath(CalendarPath)
      .addSuccess(Calendar)
      .annotateContext(doc("Unsubscribe: the calendar and its busy time are removed", write))
  )
  .add(
    HttpApiEndpoint.post("sync", "/v1/staff/:id/calendars/:calendar_id/sync")
      .setPath(CalendarPath)
      .setPayload(NoFields)
      .addSuccess(Calendar, { status: 202 })
      .annotateContext(doc(
        "Queue a read of the feed now and answer at once (202) with the calendar, its `sync_state` `queued`; while a " +
          "read of it is already queued or running, answer with that one (`queued` or `running`). Read the calendar " +
          "again for the result: `sync_state` is `idle` when the read has ended, `last_error` says why it failed (the " +
          "last good busy time stays)",
        write
      ))
  )
  .pipe(authenticated)
  .annotate(OpenApi.Title, "External calendars")
  .annotate(
    OpenApi.Description,
    "iCalendar feeds whose busy time blocks a staff member's slots, read by the server at start and on an interval."
  )
