/** The core's services composed into one layer; add a storage layer to run it. */
import { Layer } from "effect"
import { Availability } from "./Availability.js"
import { Bookings } from "./Bookings.js"
import { CalendarFeeds } from "./CalendarFeeds.js"
import { Calendars } from "./Calendars.js"
import { Clients } from "./Clients.js"
import { Domains } from "./Domains.js"
import { Events } from "./Events.js"
import { Manage } from "./Manage.js"
import { Payments } from "./Payments.js"
import { RecurringBookings } from "./RecurringBookings.js"
import { Sandbox } from "./Sandbox.js"
import { Services } from "./Services.js"
import { Staff } from "./Staff.js"
import { Webhooks } from "./Webhooks.js"
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
