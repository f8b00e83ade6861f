/** The event feed (docs/api.md §4 Polling): commit-ordered, cursor-paginated, filterable by type. */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { EventListParams } from "../../../src/events/Events.js"
import { Event } from "../../../src/events/catalogue.js"
import { doc, key } from "./access.js"
import { IdPath, pageOf } from "./common.js"
import { queryOf } from "./query.js"
import { authenticated } from "./security.js"

const read = key("events:read")

export const EventsGroup = HttpApiGroup.make("events")
  .add(
    HttpApiEndpoint.get("list", "/v1/events")
      .setUrlParams(queryOf(EventListParams))
      .addSuccess(pageOf(Event, "EventList"))
      .annotateContext(doc(
        "Events in commit order after the cursor `after` (types: comma-separated). `next_cursor` is always set: " +
          "store it and poll again to get every later event exactly once",
        read
      ))
  )
  .add(
    HttpApiEndpoint.get("get", "/v1/events/:id")
      .setPath(IdPath)
      .addSuccess(Event)
      .annotateContext(doc("Read an event", read))
  )
  .pipe(authenticated)
  .annotate(OpenApi.Title, "Events")
  .annotate(OpenApi.Description, "The account's event feed in commit order, for polling instead of (or besides) webhooks.")
