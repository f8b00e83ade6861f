/** The core's services composed into one layer; add a storage layer to run it. */
import { Layer } from "effect"
import { Availability } from "./availability/Availability.js"
import { Bookings } from "./bookings/Bookings.js"
import { CalendarFeeds } from "./calendarFeeds/CalendarFeeds.js"
import { Calendars } from "./calendars/Calendars.js"
import { Clients } from "./clients/Clients.js"
import { Domains } from "./domains/Domains.js"
import { Events } from "./events/Events.js"
import { Manage } from "./manage/Manage.js"
import { Payments } from "./payments/Payments.js"
import { RecurringBookings } from "./recurring/RecurringBookings.js"
import { Sandbox } from "./sandbox/Sandbox.js"
import { Services } from "./services/Services.js"
import { Staff } from "./staff/Staff.js"
import { Webhooks } from "./webhooks/Webhooks.js"
import { WebhookOutbox } from "./webhooks/Outbox.js"

export type CoreServices =
  | Services
  | Staff
  | Clients
  | Availability
  | Bookings
  | RecurringBookings
  | Payments
  | Events
  | Webhooks
  | WebhookOutbox
  | Sandbox
  | Domains
  | Manage
  | CalendarFeeds
  | Calendars

/**
 * Every core use case over one shared event log; needs `Storage`. Webhook URLs are checked
 * with the `WebhookPolicy` in context (default: private addresses refused, no resolver);
 * custom domains are verified with the `DnsResolver` in context (none: `verify` says so);
 * calendar feeds are written by the `CalendarRenderer` in context; external
 * calendars are read with the `FeedReader` in context (none: a sync records that); recurring
 * bookings are expanded by the `RecurrenceExpander` in context (none: they are refused).
 */
export const CoreLive = Layer.mergeAll(
  Services.Default,
  Staff.Default,
  Layer.merge(Manage.Default, RecurringBookings.Default).pipe(Layer.provideMerge(Layer.mergeAll(
    Availability.Default,
    Bookings.Default.pipe(Layer.provideMerge(Layer.merge(Clients.Default, Payments.Default))),
    Domains.Default
  ))),
  Webhooks.Default.pipe(Layer.provideMerge(WebhookOutbox.Default)),
  Sandbox.Default,
  CalendarFeeds.Default,
  Calendars.Default
).pipe(Layer.provideMerge(Events.Default))
