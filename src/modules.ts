/**
 * The core's public surface by module, in the style of @effect/sql's index: one namespace
 * per module, named after what it holds, e.g. `Bookings.Bookings` (the service),
 * `Booking.BookingCreate` (its schema), `Storage.Storage` (the port). Published as
 * `slotwise/modules`; the package's root keeps its flat names (docs/library.md).
 * Nothing under src/internal/ is reachable from here.
 */

// Use cases: each module's service, its list parameters and its settings.
export * as Accounts from "./Accounts.js"
export * as Availability from "./Availability.js"
export * as Bookings from "./Bookings.js"
export * as CalendarFeeds from "./CalendarFeeds.js"
export * as Calendars from "./Calendars.js"
export * as Clients from "./Clients.js"
export * as Domains from "./Domains.js"
export * as Events from "./Events.js"
export * as Manage from "./Manage.js"
export * as OAuthClients from "./OAuthClients.js"
export * as OAuthGrants from "./OAuthGrants.js"
export * as Payments from "./Payments.js"
export * as Reminders from "./Reminders.js"
export * as Sandbox from "./Sandbox.js"
export * as Services from "./Services.js"
export * as Staff from "./Staff.js"
export * as Users from "./Users.js"
export * as Webhooks from "./Webhooks.js"
export * as Layers from "./layers.js"
export * as Facade from "./facade.js"
export * as RateLimits from "./ratelimit/index.js"

// The domain: one module per resource, its schemas, ids, rules and errors.
export * as Account from "./domain/account.js"
export * as AvailabilityRule from "./domain/availability.js"
export * as Booking from "./domain/booking.js"
export * as Calendar from "./domain/calendar.js"
export * as CalendarFeed from "./domain/calendarFeed.js"
export * as Client from "./domain/client.js"
export * as Common from "./domain/common.js"
export * as CustomDomain from "./domain/domain.js"
export * as Errors from "./domain/errors.js"
export * as EventCatalogue from "./events/catalogue.js"
export * as Hold from "./domain/hold.js"
export * as Ids from "./domain/ids.js"
export * as ManageLink from "./domain/manageLink.js"
export * as OAuthClient from "./domain/oauthClient.js"
export * as Page from "./domain/page.js"
export * as Payment from "./domain/payment.js"
export * as Question from "./domain/question.js"
export * as Reminder from "./domain/reminder.js"
export * as Service from "./domain/service.js"
export * as Slot from "./domain/slot.js"
export * as StaffMember from "./domain/staff.js"
export * as User from "./domain/user.js"
export * as Validation from "./domain/validation.js"
export * as Webhook from "./domain/webhook.js"

// Ports: what an adapter implements.
export * as AfterCommit from "./ports/afterCommit.js"
export * as CalendarRenderer from "./ports/calendar.js"
export * as Collections from "./ports/collections.js"
export * as DnsResolver from "./ports/dns.js"
export * as FeedReader from "./ports/feedReader.js"
export * as ManageLinks from "./ports/manageLinks.js"
export * as PasswordHasher from "./ports/passwordHasher.js"
export * as RateLimitStore from "./ports/rateLimitStore.js"
export * as Storage from "./ports/storage.js"
export * as Tenant from "./ports/tenant.js"
