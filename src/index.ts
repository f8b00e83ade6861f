/**
 * The core's public surface for Effect users: the use-case services, their layer, the
 * ports an adapter implements, the domain schemas and the typed errors.
 */
export { Accounts, HANDLE_OWNERS_TENANT, type HandleOwner, HandleOwnersCollection } from "./Accounts.js"
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
} from "./domain/account.js"
export { Availability, ExplainQuery, Explanation, SlotList, SlotQuery } from "./Availability.js"
export { BookingListParams, Bookings } from "./Bookings.js"
export { BookingSeriesListParams, publicSeries, RecurringBookings } from "./RecurringBookings.js"
export * from "./domain/recurrence.js"
export * from "./domain/series.js"
export { type LocalDateTime, RecurrenceExpander, type RecurrenceExpanderService, type RecurrenceExpansion } from "./ports/recurrence.js"
export {
  CALENDAR_FEED_TOKENS_TENANT,
  type CalendarFeedToken,
  CalendarFeedTokensCollection,
  CalendarFeeds,
  CalendarFeedsCollection,
  MAX_FEED_EVENTS,
  type RenderedFeed
} from "./CalendarFeeds.js"
export * from "./domain/calendarFeed.js"
export { CalendarRenderer, type CalendarRendererService } from "./ports/calendar.js"
export { CalendarListParams, Calendars, CalendarSyncSettings, type CalendarSyncSettingsService } from "./Calendars.js"
export { BusyRangesCollection, CalendarsCollection } from "./calendars/collections.js"
export { FeedFailed, FeedReader, type FeedReaderService, type FeedRequest, type FeedResult } from "./ports/feedReader.js"
export { ClientListParams, Clients } from "./Clients.js"
export * from "./domain/assignment.js"
export * from "./domain/availability.js"
export * from "./domain/booking.js"
export * from "./domain/calendar.js"
export * from "./domain/client.js"
export * from "./domain/domain.js"
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
} from "./Domains.js"
export { DnsLookupFailed, DnsResolver, type DnsResolverService } from "./ports/dns.js"
export * from "./domain/common.js"
export * from "./domain/errors.js"
export * from "./domain/hold.js"
export {
  ClientRefusal,
  ManageCancel,
  ManagedBooking,
  ManageLink,
  ManageReschedule,
  ManageSlotQuery,
  MANAGE_LIMITS
} from "./domain/manageLink.js"
export { Manage, type OpenedLink } from "./Manage.js"
export * from "./ports/manageLinks.js"
export * from "./ports/publicUrl.js"
export * from "./domain/ids.js"
export * from "./domain/payment.js"
export * from "./domain/question.js"
export * from "./domain/service.js"
export { Staff as StaffMember, StaffCreate, StaffFields, StaffUpdate } from "./domain/staff.js"
export * from "./domain/slot.js"
export { type CommittedEvent, type EventListener, EventListParams, Events } from "./Events.js"
export * from "./events/catalogue.js"
export { Payments } from "./Payments.js"
export * from "./domain/reminder.js"
export {
  makeReminderFiring,
  ReminderDefaults,
  ReminderJobsCollection,
  type ReminderSettings,
  ReminderSettingsCollection
} from "./Reminders.js"
export { Sandbox, SandboxEmit } from "./Sandbox.js"
export * from "./domain/webhook.js"
export { DeliveryListParams, WebhookListParams, Webhooks } from "./Webhooks.js"
export {
  type AttemptRecord,
  type ClaimedDelivery,
  type ClaimOptions,
  endpointKey,
  tenantKey,
  WebhookOutbox
} from "./webhooks/Outbox.js"
export { addressBlockReason, isIpLiteral, literalHostBlockReason } from "./webhooks/address.js"
export { WebhookPolicy, type WebhookPolicyService } from "./webhooks/policy.js"
export * from "./webhooks/retrySchedule.js"
export * from "./facade.js"
export { decodeInput, fieldErrorsOf } from "./domain/validation.js"
export { type Page, PageSchema } from "./domain/page.js"
export { CoreLive, type CoreServices } from "./layers.js"
export * from "./ports/collections.js"
export * from "./ports/storage.js"
export * from "./ports/tenant.js"
export { ServiceListParams, Services } from "./Services.js"
export { Staff, StaffListParams } from "./Staff.js"
export { TestClockAt } from "./testing/testClock.js"
export * from "./domain/oauthClient.js"
export * from "./domain/user.js"
export { OAuthClientListParams, OAuthClients } from "./OAuthClients.js"
export { OAuthGrantListParams, OAuthGrants } from "./OAuthGrants.js"
export { OAuthCollections } from "./oauth/collections.js"
export { PasswordHasher, type PasswordHasherService } from "./ports/passwordHasher.js"
export { UserListParams, Users } from "./Users.js"
