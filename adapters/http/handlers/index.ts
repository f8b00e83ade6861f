/** Every group's handlers. A new group adds its layer here, next to its `.add(…)` in api.ts. */
import { Layer } from "effect"
import { AccountLive, ApiKeysLive } from "./account.js"
import { AdminLive } from "./admin.js"
import { AdminUsersLive } from "./adminUsers.js"
import { AvailabilityLive } from "./availability.js"
import { BookingSeriesLive, BookingsLive } from "./bookings.js"
import { CalendarFeedsLive, CalendarLive } from "./calendarFeeds.js"
import { CalendarsLive } from "./calendars.js"
import { DomainsLive, TlsLive } from "./domains.js"
import { EventsLive } from "./events.js"
import { ManageLinksLive, ManageLive } from "./manage.js"
import { OAuthClientsLive, OAuthGrantsLive } from "./oauth.js"
import { ClientsLive, ServicesLive, StaffLive } from "./resources.js"
import { SandboxLive } from "./sandbox.js"
import { AuthenticationLive, CallerTenantLive, OperatorAuthenticationLive } from "./security.js"
import { SystemLive } from "./system.js"
import { WebhooksLive } from "./webhooks.js"
import { WidgetLive } from "./widget.js"

export const HandlersLive = Layer.mergeAll(
  SystemLive,
  AccountLive,
  ApiKeysLive,
  ServicesLive,
  StaffLive,
  ClientsLive,
  AvailabilityLive,
  BookingsLive,
  BookingSeriesLive,
  ManageLinksLive,
  ManageLive,
  EventsLive,
  WebhooksLive,
  SandboxLive,
  OAuthClientsLive,
  OAuthGrantsLive,
  WidgetLive,
  DomainsLive,
  CalendarsLive,
  TlsLive,
  CalendarFeedsLive,
  CalendarLive,
  AdminLive,
  AdminUsersLive
).pipe(Layer.provide([AuthenticationLive, CallerTenantLive, OperatorAuthenticationLive]))
