/**
 * The core's public surface for Effect users (`slotwise/core`): one namespace per feature, as
 * `@effect/sql` does, e.g. `Bookings.Bookings` (the use case), `Bookings.BookingCreate` (its
 * schema), `Storage.Storage` (the port), `Errors.SlotUnavailable`. Each namespace is its
 * folder's index.ts; nothing under src/internal/ is reachable from here.
 */

// Features: each one's use case, schemas, types and constants.
export * as Accounts from "./accounts/index.js"
export * as Availability from "./availability/index.js"
export * as Bookings from "./bookings/index.js"
export * as CalendarFeeds from "./calendarFeeds/index.js"
export * as Calendars from "./calendars/index.js"
export * as Clients from "./clients/index.js"
export * as Domains from "./domains/index.js"
export * as Events from "./events/index.js"
export * as Manage from "./manage/index.js"
export * as OAuth from "./oauth/index.js"
export * as Payments from "./payments/index.js"
export * as RateLimits from "./ratelimit/index.js"
export * as Recurring from "./recurring/index.js"
export * as Reminders from "./reminders/index.js"
export * as Sandbox from "./sandbox/index.js"
export * as Services from "./services/index.js"
export * as Staff from "./staff/index.js"
export * as Users from "./users/index.js"
export * as Webhooks from "./webhooks/index.js"

// The shared domain, its typed errors, the ports an adapter implements, the core's layer.
export * as Domain from "./domain/index.js"
export * as Errors from "./domain/errors.js"
export * as Storage from "./ports/index.js"
export * as Layers from "./layers.js"
export * as Testing from "./testing/index.js"
