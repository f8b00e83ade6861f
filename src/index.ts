/**
 * The core's public surface for Effect users: the use-case services, their layer, the
 * ports an adapter implements, the domain schemas and the typed errors.
 */
export { Accounts, HANDLE_OWNERS_TENANT, type HandleOwner, HandleOwnersCollection } from "./accounts/Accounts.js"
export {
  Account,
  AccountSettingsUpdate,
  AccountUpdate,
  Branding,
  BrandingUpdate,
  Handle,
  HANDLE_HOLD_DAYS,
  handleProblem,
  NO_BRANDING,
  Plan,
  RESERVED_HANDLES,
  showsPoweredBy
} from "./accounts/account.js"
export { Availability, ExplainQuery, Explanation, SlotList, SlotQuery } from "./availability/Availability.js"
export { BookingListParams, Bookings } from "./bookings/Bookings.js"
export { BookingSeriesListParams, publicSeries, RecurringBookings } from "./recurring/RecurringBookings.js"
export * from "./recurring/recurrence.js"
export * from "./recurring/series.js"
export { type LocalDateTime, RecurrenceExpander, type RecurrenceExpanderService, type RecurrenceExpansion } from "./ports/recurrence.js"
export {
  CALENDAR_FEED_TOKENS_TENANT,
  type CalendarFeedToken,
  CalendarFeedTokensCollection,
  CalendarFeeds,
  CalendarFeedsCollection,
  MAX_FEED_EVENTS,
  type RenderedFeed
} from "./calendarFeeds/CalendarFeeds.js"
export * from "./calendarFeeds/calendarFeed.js"
export { CalendarRenderer, type CalendarRendererService } from "./ports/calendar.js"
export { CalendarListParams, Calendars, CalendarSyncSettings, type CalendarSyncSettingsService } from "./calendars/Calendars.js"
export { BusyRangesCollection, CalendarsCollection } from "./calendars/collections.js"
export { FeedFailed, FeedReader, type FeedReaderService, type FeedRequest, type FeedResult } from "./ports/feedReader.js"
export { ClientListParams, Clients } from "./clients/Clients.js"
export * from "./domain/assignment.js"
export * from "./availability/rule.js"
export * from "./bookings/booking.js"
export * from "./calendars/calendar.js"
export * from "./clients/client.js"
export * from "./domains/domain.js"
export {
  DEFAULT_DOMAIN_CACHE_TTL_MS,
  DOMAIN_OWNERS_TENANT,
  DomainListParams,
  type DomainOwner,
  DomainOwnersCollection,
  Domains,
  DomainsCollection,
  DomainSettings,
  type DomainSettingsService
} from "./domains/Domains.js"
export { DnsLookupFailed, DnsResolver, type DnsResolverService } from "./ports/dns.js"
export * from "./domain/common.js"
export * from "./domain/errors.js"
export * from "./availability/hold.js"
export {
  ClientRefusal,
  ManageCancel,
  ManagedBooking,
  ManageLink,
  ManageReschedule,
  ManageSlotQuery,
  MANAGE_LIMITS
} from "./manage/manageLink.js"
export { Manage, type OpenedLink } from "./manage/Manage.js"
export * from "./ports/manageLinks.js"
export * from "./ports/publicUrl.js"
export * from "./domain/ids.js"
export * from "./payments/payment.js"
export * from "./services/question.js"
export * from "./services/service.js"
export { Staff as StaffMember, StaffCreate, StaffFields, StaffUpdate } from "./staff/member.js"
export * from "./domain/slot.js"
export { type CommittedEvent, type EventListener, EventListParams, Events } from "./events/Events.js"
export * from "./events/catalogue.js"
export { Payments } from "./payments/Payments.js"
export * from "./reminders/reminder.js"
export {
  makeReminderFiring,
  ReminderDefaults,
  ReminderJobsCollection,
  type ReminderSettings,
  ReminderSettingsCollection
} from "./reminders/Reminders.js"
export { Sandbox, SandboxEmit } from "./sandbox/Sandbox.js"
export * from "./webhooks/webhook.js"
export { DeliveryListParams, WebhookListParams, Webhooks } from "./webhooks/Webhooks.js"
export { type AttemptRecord, type ClaimedDelivery, type ClaimOptions, endpointKey, tenantKey, WebhookOutbox } from "./webhooks/Outbox.js"
export { addressBlockReason, isIpLiteral, literalHostBlockReason } from "./webhooks/address.js"
export { WebhookPolicy, type WebhookPolicyService } from "./webhooks/policy.js"
export * from "./webhooks/retrySchedule.js"
export { decodeInput, fieldErrorsOf } from "./domain/validation.js"
export { type Page, PageSchema } from "./domain/page.js"
export { CoreLive, type CoreServices } from "./layers.js"
export * from "./ports/collections.js"
export * from "./ports/storage.js"
export * from "./ports/tenant.js"
export { ServiceListParams, Services } from "./services/Services.js"
export { Staff, StaffListParams } from "./staff/Staff.js"
export { TestClockAt } from "./testing/testClock.js"
export * from "./oauth/oauthClient.js"
export * from "./users/user.js"
export { OAuthClientListParams, OAuthClients } from "./oauth/OAuthClients.js"
export { OAuthGrantListParams, OAuthGrants } from "./oauth/OAuthGrants.js"
export { OAuthCollections } from "./oauth/collections.js"
export { PasswordHasher, type PasswordHasherService } from "./ports/passwordHasher.js"
export { UserListParams, Users } from "./users/Users.js"
