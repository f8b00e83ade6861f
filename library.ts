/**
 * The Promise facade for Node apps without Effect (docs/api.md §6): the same use cases, the same
 * objects, and failures as `SlotwiseError` subclasses carrying the HTTP API's problem.
 */
import { Cause, Effect, Exit, type ManagedRuntime, Option, Runtime } from "effect"
import { Availability } from "./src/availability/Availability.js"
import { Bookings } from "./src/bookings/Bookings.js"
import { CalendarFeeds } from "./src/calendarFeeds/CalendarFeeds.js"
import { Clients } from "./src/clients/Clients.js"
import { Calendars } from "./src/calendars/Calendars.js"
import { Domains } from "./src/domains/Domains.js"
import { Environment } from "./src/domain/common.js"
import { type FieldError, isSlotwiseFailure, type Problem, type SlotwiseFailure, toProblem } from "./src/domain/errors.js"
import type { BlockedOccurrence, Reason, Slot } from "./src/domain/slot.js"
import type { Booking } from "./src/bookings/booking.js"
import type { ManageLink } from "./src/manage/manageLink.js"
import { Events } from "./src/events/Events.js"
import { Manage } from "./src/manage/Manage.js"
import { RecurringBookings } from "./src/recurring/RecurringBookings.js"
import type { Event } from "./src/events/catalogue.js"
import type { CoreServices } from "./src/layers.js"
import { Tenant, type TenantId } from "./src/ports/tenant.js"
import { Sandbox } from "./src/sandbox/Sandbox.js"
import { Services } from "./src/services/Services.js"
import { Staff } from "./src/staff/Staff.js"
import { Webhooks } from "./src/webhooks/Webhooks.js"

/** A failure of a Slotwise call: `code` and `status` are the HTTP API's for the same problem. */
export class SlotwiseError extends Error {
  readonly code: string
  readonly status: number
  readonly title: string
  readonly detail: string
  readonly errors: ReadonlyArray<FieldError> | undefined
  readonly alternatives: ReadonlyArray<Slot> | undefined
  readonly reasons: ReadonlyArray<Reason> | undefined
  /** `series_unavailable`: each occurrence that could not be booked, with its reasons. */
  readonly occurrences: ReadonlyArray<BlockedOccurrence> | undefined
  constructor(readonly problem: Problem, options?: { cause?: unknown }) {
    super(problem.detail, options)
    this.name = new.target.name
    this.code = problem.code
    this.status = problem.status
    this.title = problem.title
    this.detail = problem.detail
    this.errors = problem.errors
    this.alternatives = problem.alternatives
    this.reasons = problem.reasons
    this.occurrences = problem.occurrences
  }
}
/** 400 and 422: the input was malformed or invalid (`errors` names each field). */
export class ValidationError extends SlotwiseError {}
export class NotFoundError extends SlotwiseError {}
/** 409: the request conflicts with the current state. */
export class ConflictError extends SlotwiseError {}
export class SlotUnavailableError extends ConflictError {}
export class OutsideAvailabilityError extends ConflictError {}
export class SeriesUnavailableError extends ConflictError {}
export class InvalidTransitionError extends ConflictError {}
export class ResourceInUseError extends ConflictError {}
export class AuthenticationError extends SlotwiseError {}
export class PermissionError extends SlotwiseError {}
export class RateLimitError extends SlotwiseError {}
/** 500: a fault in Slotwise or its storage, not in the request. */
export class InternalError extends SlotwiseError {}

const ERROR_CLASSES: { readonly [K in SlotwiseFailure["_tag"]]: typeof SlotwiseError } = {
  BadRequest: ValidationError,
  ValidationFailed: ValidationError,
  InvalidReference: ValidationError,
  IdempotencyMismatch: ValidationError,
  NotFound: NotFoundError,
  SlotUnavailable: SlotUnavailableError,
  OutsideAvailability: OutsideAvailabilityError,
  SeriesUnavailable: SeriesUnavailableError,
  InvalidTransition: InvalidTransitionError,
  ResourceInUse: ResourceInUseError,
  HoldExpired: ConflictError,
  HoldLimitReached: RateLimitError,
  NoticePeriodPassed: ConflictError,
  IdempotencyConflict: ConflictError,
  IdempotencySecretWithheld: ConflictError,
  Unauthorized: AuthenticationError,
  Forbidden: PermissionError,
  RateLimited: RateLimitError,
  PlanRequired: PermissionError,
  DomainTaken: ConflictError,
  HandleTaken: ConflictError,
  VerificationFailed: ValidationError,
  StorageFailure: InternalError
}

export const toSlotwiseError = (failure: SlotwiseFailure): SlotwiseError =>
  new ERROR_CLASSES[failure._tag](toProblem(failure), { cause: failure })

const internalError = (cause: unknown) =>
  new InternalError({
    type: "https://slotwise.dev/errors/internal_error",
    title: "Internal error",
    status: 500,
    code: "internal_error",
    detail: "An internal error occurred."
  }, { cause })

/**
 * Why an instance could not start, in its storage's own words: the database is the
 * application's own configuration (a missing file's directory, a PostgreSQL database that
 * does not exist), which an HTTP client's 500 would hide.
 */
const startFailure = (cause: Cause.Cause<unknown>): SlotwiseError => {
  const failure = Cause.failureOption(cause)
  if (Option.isNone(failure) || !isSlotwiseFailure(failure.value)) return internalError(Cause.squash(cause))
  const error = toSlotwiseError(failure.value)
  if (failure.value._tag !== "StorageFailure") return error
  const Class = error.constructor as typeof SlotwiseError
  return new Class({ ...error.problem, detail: `the storage could not be opened: ${failure.value.detail}` }, { cause: failure.value })
}

/** The default tenant of an embedded instance: one account's sandbox. */
export const DEFAULT_TENANT: TenantId = { account_id: `acc_${"0".repeat(26)}`, environment: "sandbox" }

type Promisified<S, K extends keyof S> = {
  readonly [P in K]: S[P] extends (...args: infer A) => Effect.Effect<infer R, any, any> ? (...args: A) => Promise<R>
    : never
}

export interface SchedulingClient {
  readonly services: Promisified<Services, "create" | "get" | "list" | "update" | "delete">
  readonly staff: Promisified<Staff, "create" | "get" | "list" | "update" | "delete">
  readonly clients: Promisified<Clients, "create" | "get" | "list" | "update" | "delete">
  readonly availability: Promisified<
    Availability,
    "create" | "get" | "list" | "update" | "delete" | "slots" | "explain" | "hold" | "getHold" | "releaseHold"
  >
  readonly bookings:
    & Promisified<
      Bookings,
      | "create"
      | "get"
      | "list"
      | "update"
      | "delete"
      | "confirm"
      | "cancel"
      | "reschedule"
      | "complete"
      | "noShow"
      | "recordPayment"
      | "listPayments"
    >
    & {
      /** The booking's manage link (`{publicUrl}/manage/{token}`) and its bare token, for the client. */
      readonly manageLink: (id: string) => Promise<ManageLink>
      /** Bumps the booking's `manage_version`: every earlier link is dead; the booking with its new `manage_url`. */
      readonly rotateManageLink: (id: string) => Promise<Booking>
    }
  /**
   * Recurring bookings: `create` takes a booking request with `recurrence` (and `on_conflict`)
   * and resolves with the series and its occurrences; `list({ client_id?, staff_id?, service_id?,
   * limit?, cursor? })` pages them by creation; `cancel(id, { from?, reason? })`.
   */
  readonly bookingSeries: Promisified<RecurringBookings, "create" | "get" | "list" | "cancel">
  /**
   * The client's side of a manage link: the token is the credential and names its tenant,
   * so these act on the token's booking whatever tenant this client is for.
   */
  readonly manage: Promisified<Manage, "get" | "slots" | "cancel" | "reschedule">
  readonly events: Promisified<Events, "list" | "get"> & {
    /** Calls `listener` after each committed change of this tenant; returns the unsubscribe. */
    readonly subscribe: (listener: (event: Event) => void) => () => void
  }
  /** Webhook endpoints and their deliveries (sent when the instance runs the dispatcher). */
  readonly webhooks: Promisified<Webhooks, (typeof WEBHOOK_METHODS)[number]>
  /**
   * Custom domains of this tenant: `create` answers a pending domain with the TXT record to
   * publish, `verify` looks it up (a ValidationError, 422 `verification_failed`, says what it found).
   */
  readonly domains: Promisified<Domains, "create" | "list" | "get" | "verify" | "delete">
  /**
   * Secret iCalendar feeds: `create(staffId)` answers the URL (once; calling it again makes a
   * new one and ends the old), `get` says whether one exists, `delete` ends it; the
   * `…ForAccount` methods do the same for every staff member's bookings. `render(token)`
   * answers a feed's `{ body, etag }` for an app that serves `/calendar/<token>.ics` itself.
   */
  readonly calendarFeeds: Promisified<CalendarFeeds, (typeof CALENDAR_FEED_METHODS)[number]>
  /**
   * Staff members' external calendars (iCalendar feeds whose busy time blocks slots): each
   * method takes the staff id first; `sync` reads the feed now and resolves with the result.
   */
  readonly calendars: Promisified<Calendars, "create" | "list" | "get" | "delete" | "sync">
  /** The sandbox's triggers; both reject with a PermissionError (403) for a production tenant. */
  readonly sandbox: Promisified<Sandbox, "emit" | "reset">
  /** The tenant this client acts for. */
  readonly currentTenant: TenantId
  /** The same API acting for another tenant, over the same storage. */
  readonly tenant: (tenant: { readonly account_id: string; readonly environment: string }) => SchedulingClient
  /** Closes storage and stops background work; the instance cannot be used afterwards. */
  readonly close: () => Promise<void>
}

const ACCOUNT_ID = /^acc_[0-9A-HJKMNP-TV-Z]{26}$/

const CALENDAR_FEED_METHODS = ["create", "get", "delete", "createForAccount", "getForAccount", "deleteForAccount", "render"] as const

const WEBHOOK_METHODS = [
  "create",
  "get",
  "list",
  "update",
  "delete",
  "rotateSecret",
  "listDeliveries",
  "getDelivery",
  "retryDelivery",
  "sendTest",
  "recover"
] as const

export interface CoreInstance {
  /** Owns the layers: disposing it closes storage. */
  readonly managed: ManagedRuntime.ManagedRuntime<CoreServices, unknown>
  /** The built runtime, to derive each tenant's from. */
  readonly runtime: Runtime.Runtime<CoreServices>
  readonly services: {
    readonly services: Services
    readonly staff: Staff
    readonly clients: Clients
    readonly availability: Availability
    readonly bookings: Bookings
    readonly bookingSeries: RecurringBookings
    readonly events: Events
    readonly webhooks: Webhooks
    readonly sandbox: Sandbox
    readonly domains: Domains
    readonly manage: Manage
    readonly calendarFeeds: CalendarFeeds
    readonly calendars: Calendars
  }
}

export const makeFacade = (core: CoreInstance, tenant: TenantId): SchedulingClient => {
  const { services } = core
  // The tenant is part of this client's runtime: providing it on every call would cost
  // more than a small read.
  const runPromiseExit = Runtime.runPromiseExit(Runtime.provideService(core.runtime, Tenant, tenant))
  const run = <A>(effect: Effect.Effect<A, SlotwiseFailure, Tenant | CoreServices>): Promise<A> =>
    runPromiseExit(effect).then((exit) => {
      if (Exit.isSuccess(exit)) return exit.value
      const failure = Cause.failureOption(exit.cause)
      throw Option.isSome(failure) && isSlotwiseFailure(failure.value)
        ? toSlotwiseError(failure.value)
        : internalError(Cause.squash(exit.cause))
    })

  const promisify = <S extends object, K extends keyof S>(service: S, keys: ReadonlyArray<K>) =>
    Object.fromEntries(
      keys.map((key) => [key, (...args: Array<unknown>) => run((service[key] as any)(...args))])
    ) as Promisified<S, K>

  const crud = ["create", "get", "list", "update", "delete"] as const
  return {
    services: promisify(services.services, crud),
    staff: promisify(services.staff, crud),
    clients: promisify(services.clients, crud),
    availability: promisify(services.availability, [...crud, "slots", "explain", "hold", "getHold", "releaseHold"]),
    bookings: {
      ...promisify(services.bookings, [
        ...crud,
        "confirm",
        "cancel",
        "reschedule",
        "complete",
        "noShow",
        "recordPayment",
        "listPayments"
      ]),
      manageLink: (id) => run(services.manage.manageLink(id)),
      rotateManageLink: (id) => run(services.manage.rotate(id))
    },
    bookingSeries: promisify(services.bookingSeries, ["create", "get", "list", "cancel"]),
    manage: promisify(services.manage, ["get", "slots", "cancel", "reschedule"]),
    events: {
      ...promisify(services.events, ["list", "get"]),
      subscribe: (listener) =>
        services.events.subscribe((event, from) => {
          if (from.account_id === tenant.account_id && from.environment === tenant.environment) listener(event)
        })
    },
    webhooks: promisify(services.webhooks, WEBHOOK_METHODS),
    sandbox: promisify(services.sandbox, ["emit", "reset"]),
    domains: promisify(services.domains, ["create", "list", "get", "verify", "delete"]),
    calendarFeeds: promisify(services.calendarFeeds, CALENDAR_FEED_METHODS),
    calendars: promisify(services.calendars, ["create", "list", "get", "delete", "sync"]),
    currentTenant: tenant,
    tenant: (next) => {
      if (!ACCOUNT_ID.test(next.account_id)) throw new TypeError(`account_id must be an acc_ id, got ${next.account_id}`)
      if (!Environment.literals.includes(next.environment as any)) {
        throw new TypeError(`environment must be "sandbox" or "production", got ${next.environment}`)
      }
      return makeFacade(core, next as TenantId)
    },
    close: () => core.managed.dispose()
  }
}

/** Builds the layers of `managed` and reads the core services out of it, for {@link makeFacade}. */
export const startCore = async (managed: ManagedRuntime.ManagedRuntime<CoreServices, unknown>): Promise<CoreInstance> => {
  const built = await Effect.runPromiseExit(managed.runtimeEffect)
  if (Exit.isFailure(built)) {
    await managed.dispose()
    throw startFailure(built.cause)
  }
  const runtime = built.value
  const services = await managed.runPromise(Effect.gen(function*() {
    return {
      services: yield* Services,
      staff: yield* Staff,
      clients: yield* Clients,
      availability: yield* Availability,
      bookings: yield* Bookings,
      bookingSeries: yield* RecurringBookings,
      events: yield* Events,
      webhooks: yield* Webhooks,
      sandbox: yield* Sandbox,
      domains: yield* Domains,
      manage: yield* Manage,
      calendarFeeds: yield* CalendarFeeds,
      calendars: yield* Calendars
    }
  }))
  return { managed, runtime, services }
}
