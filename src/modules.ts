/**
 * The core's public surface by module, in the style of @effect/sql's index: one namespace
 * per module, named after what it holds, e.g. `Bookings.Bookings` (the service),
 * `Booking.BookingCreate` (its schema), `Storage.Storage` (the port). Published as
 * `slotwise/modules`; the package's root keeps its flat names (docs/library.md).
 * Nothing under src/internal/ is reachable from here.
 */

// Use cases: each module's service, its list parameters and its settings.
export * as Accounts from "./accounts/Accounts.js"
export * as Availability from "./availability/Availability.js"
export * as Bookings from "./bookings/Bookings.js"
export * as CalendarFeeds from "./calendarFeeds/CalendarFeeds.js"
export * as Calendars from "./calendars/Calendars.js"
export * as Clients from "./clients/Clients.js"
export * as Domains from "./domains/Domains.js"
export * as Events from "./events/Events.js"
export * as Manage from "./manage/Manage.js"
export * as OAuthClients from "./oauth/OAuthClients.js"
export * as OAuthGrants from "./oauth/OAuthGrants.js"
export * as Payments from "./payments/Payments.js"
export * as Reminders from "./reminders/Reminders.js"
export * as Sandbox from "./sandbox/Sandbox.js"
export * as Services from "./services/Services.js"
export * as Staff from "./staff/Staff.js"
export * as Users from "./users/Users.js"
export * as Webhooks from "./webhooks/Webhooks.js"
export * as Layers from "./layers.js"
export * as RateLimits from "./ratelimit/index.js"

// The domain: one module per resource, its schemas, ids, rules and errors.
export * as Account from "./accounts/account.js"
export * as AvailabilityRule from "./availability/rule.js"
export * as Booking from "./bookings/booking.js"
export * as Calendar from "./calendars/calendar.js"
export * as CalendarFeed from "./calendarFeeds/calendarFeed.js"
export * as Client from "./clients/client.js"
export * as Common from "./domain/common.js"
export * as CustomDomain from "./domains/domain.js"
export * as Errors from "./domain/errors.js"
export * as EventCatalogue from "./events/catalogue.js"
export * as Hold from "./availability/hold.js"
export * as Ids from "./domain/ids.js"
export * as ManageLink from "./manage/manageLink.js"
export * as OAuthClient from "./oauth/oauthClient.js"
export * as Page from "./domain/page.js"
export * as Payment from "./payments/payment.js"
export * as Question from "./services/question.js"
export * as Reminder from "./reminders/reminder.js"
export * as Service from "./services/service.js"
export * as Slot from "./domain/slot.js"
export * as StaffMember from "./staff/member.js"
export * as User from "./users/user.js"
export * as Validation from "./domain/validation.js"
export * as Webhook from "./webhooks/webhook.js"

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
