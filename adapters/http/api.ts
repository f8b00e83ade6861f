/**
 * The /v1 HTTP contract: every group, its endpoints and their schemas (all derived from the
 * core's), the problems they may answer with. Shared by the server, the OpenAPI document and
 * a typed `HttpApiClient`.
 *
 * Adding a group: define it in `contract/<name>.ts`, add it below
 * with `.add(…)`, implement it in `handlers/<name>.ts` and list its layer in
 * `handlers/index.ts`. The pipeline picks up its access annotations by itself.
 */
import { HttpApi, OpenApi } from "@effect/platform"
import { AccountGroup, ApiKeysGroup } from "./contract/account.js"
import { AdminGroup } from "./contract/admin.js"
import { AdminUsersGroup } from "./contract/adminUsers.js"
import { AvailabilityGroup } from "./contract/availability.js"
import { BookingsGroup } from "./contract/bookings.js"
import { BookingSeriesGroup } from "./contract/series.js"
import { CalendarFeedsGroup, CalendarGroup } from "./contract/calendarFeeds.js"
import { CalendarsGroup } from "./contract/calendars.js"
import { DomainsGroup, TlsGroup } from "./contract/domains.js"
import { EventsGroup } from "./contract/events.js"
import { ManageGroup, ManageLinksGroup } from "./contract/manage.js"
import { OAuthClientsGroup, OAuthGrantsGroup } from "./contract/oauth.js"
import {
  BadRequestProblem,
  ForbiddenProblem,
  IdempotencyConflictProblem,
  IdempotencyMismatchProblem,
  InternalErrorProblem,
  InvalidReferenceProblem,
  MethodNotAllowedProblem,
  NotFoundProblem,
  PayloadTooLargeProblem,
  RateLimitedProblem,
  UnauthorizedProblem,
  UnsupportedMediaTypeProblem,
  ValidationFailedProblem
} from "./contract/problems.js"
import { ClientsGroup, ServicesGroup, StaffGroup } from "./contract/resources.js"
import { SandboxGroup } from "./contract/sandbox.js"
import { SystemGroup } from "./contract/system.js"
import { WebhooksGroup } from "./contract/webhooks.js"
import { WidgetGroup } from "./contract/widget.js"
import { cleanOpenApi } from "./openapi.js"

export const VERSION = "0.1.0"

export class SlotwiseApi extends HttpApi.make("slotwise")
  .add(SystemGroup)
  .add(AccountGroup)
  .add(ApiKeysGroup)
  .add(ServicesGroup)
  .add(StaffGroup)
  .add(ClientsGroup)
  .add(AvailabilityGroup)
  .add(BookingsGroup)
  .add(BookingSeriesGroup)
  .add(ManageLinksGroup)
  .add(ManageGroup)
  .add(EventsGroup)
  .add(WebhooksGroup)
  .add(SandboxGroup)
  .add(OAuthClientsGroup)
  .add(OAuthGrantsGroup)
  .add(WidgetGroup)
  .add(DomainsGroup)
  .add(CalendarsGroup)
  .add(TlsGroup)
  .add(CalendarFeedsGroup)
  .add(CalendarGroup)
  .add(AdminGroup)
  .add(AdminUsersGroup)
  .addError(BadRequestProblem)
  .addError(UnauthorizedProblem)
  .addError(ForbiddenProblem)
  .addError(NotFoundProblem)
  .addError(MethodNotAllowedProblem)
  .addError(IdempotencyConflictProblem)
  .addError(PayloadTooLargeProblem)
  .addError(UnsupportedMediaTypeProblem)
  .addError(ValidationFailedProblem)
  .addError(InvalidReferenceProblem)
  .addError(IdempotencyMismatchProblem)
  .addError(RateLimitedProblem)
  .addError(InternalErrorProblem)
  .annotateContext(OpenApi.annotations({
    title: "Slotwise API",
    version: VERSION,
    description: "Scheduling: services, staff, clients, availability, bookings; the event feed, signed webhooks " +
      "(Standard Webhooks) and the sandbox's triggers. Errors are RFC 9457 problem " +
      "details; lists are cursor-paginated; every POST accepts Idempotency-Key; every response carries " +
      "rate-limit headers.",
    license: { name: "MIT", url: "https://opensource.org/licenses/MIT" },
    servers: [{ url: "http://127.0.0.1:8080", description: "A local server: `slotwise serve` on its default port" }],
    transform: cleanOpenApi
  }))
{}
