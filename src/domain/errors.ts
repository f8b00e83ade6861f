/**
 * Every failure a client can see, as typed errors with the stable `code`, HTTP `status`
 * and title of docs/api.md §1. The catalogue below is the one place those three are written;
 * the HTTP problem+json body and the library's `SlotwiseError` both read it.
 */
import { Schema } from "effect"
import { BlockedOccurrence, Reason, Slot } from "./slot.js"

export const FieldError = Schema.Struct({
  path: Schema.String.annotations({
    description: "the field, as dotted keys and indexes (`client.email`, `weekdays.2`); empty for the body as a whole"
  }),
  message: Schema.String.annotations({ description: "what is wrong with it, in words" })
}).annotations({ identifier: "FieldError", description: "one invalid field" })
export type FieldError = typeof FieldError.Type

const detail = { detail: Schema.String }
const fieldErrors = { ...detail, errors: Schema.Array(FieldError) }
const unbookable = { ...detail, reasons: Schema.Array(Reason), alternatives: Schema.Array(Slot) }

export class BadRequest extends Schema.TaggedError<BadRequest>()("BadRequest", fieldErrors) {}
export class ValidationFailed extends Schema.TaggedError<ValidationFailed>()("ValidationFailed", fieldErrors) {}
export class InvalidReference extends Schema.TaggedError<InvalidReference>()("InvalidReference", fieldErrors) {}
export class NotFound extends Schema.TaggedError<NotFound>()("NotFound", detail) {}
export class SlotUnavailable extends Schema.TaggedError<SlotUnavailable>()("SlotUnavailable", unbookable) {}
export class OutsideAvailability extends Schema.TaggedError<OutsideAvailability>()("OutsideAvailability", unbookable) {}
/** Some occurrences of a recurring request (`on_conflict: reject`) cannot be booked: nothing was. */
export class SeriesUnavailable extends Schema.TaggedError<SeriesUnavailable>()("SeriesUnavailable", {
  ...detail,
  occurrences: Schema.Array(BlockedOccurrence)
}) {}
export class InvalidTransition extends Schema.TaggedError<InvalidTransition>()("InvalidTransition", detail) {}
export class ResourceInUse extends Schema.TaggedError<ResourceInUse>()("ResourceInUse", detail) {}
/** A client acting through a manage link too close to the start (the service's cancellation notice). */
export class NoticePeriodPassed extends Schema.TaggedError<NoticePeriodPassed>()("NoticePeriodPassed", detail) {}
export class HoldExpired extends Schema.TaggedError<HoldExpired>()("HoldExpired", detail) {}
/** A visitor (publishable key) already holds as many slots as it may at once. */
export class HoldLimitReached extends Schema.TaggedError<HoldLimitReached>()("HoldLimitReached", detail) {}
export class Unauthorized extends Schema.TaggedError<Unauthorized>()("Unauthorized", detail) {}
export class Forbidden extends Schema.TaggedError<Forbidden>()("Forbidden", detail) {}
export class RateLimited extends Schema.TaggedError<RateLimited>()("RateLimited", {
  ...detail,
  retry_after_seconds: Schema.Int
}) {}
export class IdempotencyConflict extends Schema.TaggedError<IdempotencyConflict>()("IdempotencyConflict", detail) {}
export class IdempotencyMismatch extends Schema.TaggedError<IdempotencyMismatch>()("IdempotencyMismatch", detail) {}
/** A repeat of a request whose response carried a secret: secrets are shown once, never stored for replay. */
export class IdempotencySecretWithheld extends Schema.TaggedError<IdempotencySecretWithheld>()("IdempotencySecretWithheld", detail)
{}
/** The account's plan does not include the feature (custom domains: pro and business). */
export class PlanRequired extends Schema.TaggedError<PlanRequired>()("PlanRequired", detail) {}
/** A hostname another account (or environment) has verified: one owner at a time. */
/** A handle another account has: one account per handle. */
export class HandleTaken extends Schema.TaggedError<HandleTaken>()("HandleTaken", detail) {}
export class DomainTaken extends Schema.TaggedError<DomainTaken>()("DomainTaken", detail) {}
/** `verify` did not find the expected TXT record; the detail says what it found. */
export class VerificationFailed extends Schema.TaggedError<VerificationFailed>()("VerificationFailed", detail) {}
export class StorageFailure extends Schema.TaggedError<StorageFailure>()("StorageFailure", {
  ...detail,
  cause: Schema.optional(Schema.Defect),
  /**
   * The store could not be reached (its server down, restarting, or the connection cut):
   * nothing is wrong with the request, and the same request is worth sending again shortly.
   */
  unavailable: Schema.optional(Schema.Boolean)
}) {}

export type SlotwiseFailure =
  | BadRequest
  | ValidationFailed
  | InvalidReference
  | NotFound
  | SlotUnavailable
  | OutsideAvailability
  | SeriesUnavailable
  | InvalidTransition
  | ResourceInUse
  | HoldExpired
  | HoldLimitReached
  | NoticePeriodPassed
  | Unauthorized
  | Forbidden
  | RateLimited
  | IdempotencyConflict
  | IdempotencyMismatch
  | IdempotencySecretWithheld
  | PlanRequired
  | DomainTaken
  | HandleTaken
  | VerificationFailed
  | StorageFailure

export interface ErrorInfo {
  readonly code: string
  readonly status: number
  readonly title: string
}

/** The stable code, status and title of each failure (docs/api.md §1). */
export const ErrorCatalog: { readonly [K in SlotwiseFailure["_tag"]]: ErrorInfo } = {
  BadRequest: { code: "bad_request", status: 400, title: "Bad request" },
  ValidationFailed: { code: "validation_failed", status: 422, title: "Validation failed" },
  InvalidReference: { code: "invalid_reference", status: 422, title: "Invalid reference" },
  NotFound: { code: "not_found", status: 404, title: "Not found" },
  SlotUnavailable: { code: "slot_unavailable", status: 409, title: "Slot unavailable" },
  OutsideAvailability: { code: "outside_availability", status: 409, title: "Outside availability" },
  SeriesUnavailable: { code: "series_unavailable", status: 409, title: "Series unavailable" },
  InvalidTransition: { code: "invalid_transition", status: 409, title: "Invalid status transition" },
  ResourceInUse: { code: "resource_in_use", status: 409, title: "Resource in use" },
  HoldExpired: { code: "hold_expired", status: 409, title: "Hold expired" },
  HoldLimitReached: { code: "hold_limit_reached", status: 429, title: "Hold limit reached" },
  NoticePeriodPassed: { code: "notice_period_passed", status: 409, title: "Notice period passed" },
  Unauthorized: { code: "unauthorized", status: 401, title: "Unauthorized" },
  Forbidden: { code: "forbidden", status: 403, title: "Forbidden" },
  RateLimited: { code: "rate_limited", status: 429, title: "Too many requests" },
  IdempotencyConflict: { code: "idempotency_conflict", status: 409, title: "Idempotency key in use" },
  IdempotencyMismatch: { code: "idempotency_mismatch", status: 422, title: "Idempotency key reused" },
  IdempotencySecretWithheld: { code: "idempotency_secret_withheld", status: 409, title: "Secret not replayed" },
  PlanRequired: { code: "plan_required", status: 403, title: "Plan required" },
  DomainTaken: { code: "domain_taken", status: 409, title: "Domain taken" },
  HandleTaken: { code: "handle_taken", status: 409, title: "Handle taken" },
  VerificationFailed: { code: "verification_failed", status: 422, title: "Verification failed" },
  StorageFailure: { code: "internal_error", status: 500, title: "Internal error" }
}

/** A `StorageFailure` whose store was unreachable: a 503 the client may retry, not a fault. */
export const StorageUnavailableInfo: ErrorInfo = { code: "storage_unavailable", status: 503, title: "Service unavailable" }
/** Whole seconds a client is told to wait before retrying after `storage_unavailable`. */
export const STORAGE_RETRY_AFTER_SECONDS = 1

export const isStorageUnavailable = (error: SlotwiseFailure): boolean => error._tag === "StorageFailure" && error.unavailable === true

export const PROBLEM_TYPE_BASE = "https://slotwise.dev/errors/"

/** RFC 9457 problem details of a failure, as the HTTP API sends and the library exposes. */
export interface Problem {
  readonly type: string
  readonly title: string
  readonly status: number
  readonly code: string
  readonly detail: string
  readonly errors?: ReadonlyArray<FieldError>
  readonly alternatives?: ReadonlyArray<Slot>
  readonly reasons?: ReadonlyArray<Reason>
  readonly occurrences?: ReadonlyArray<BlockedOccurrence>
}

export const toProblem = (error: SlotwiseFailure): Problem => {
  const unavailable = isStorageUnavailable(error)
  const info = unavailable ? StorageUnavailableInfo : ErrorCatalog[error._tag]
  // A fault's detail may carry internals; a client only learns that it happened.
  const detailText = unavailable
    ? "Storage is unreachable for a moment; try again shortly."
    : error._tag === "StorageFailure"
    ? "An internal error occurred."
    : error.detail
  return {
    type: PROBLEM_TYPE_BASE + info.code,
    title: info.title,
    status: info.status,
    code: info.code,
    detail: detailText,
    ...("errors" in error ? { errors: error.errors } : {}),
    ...("alternatives" in error ? { alternatives: error.alternatives, reasons: error.reasons } : {}),
    ...(error._tag === "SeriesUnavailable" ? { occurrences: error.occurrences } : {})
  }
}

export const isSlotwiseFailure = (u: unknown): u is SlotwiseFailure =>
  typeof u === "object" && u !== null && "_tag" in u && typeof u._tag === "string" && Object.hasOwn(ErrorCatalog, u._tag)
