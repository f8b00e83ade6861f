/**
 * Every failure a client can see, as typed errors with the stable `code`, HTTP `status`
 * and title of docs/api.md §1. The catalogue below is the one place those three are written;
 * the HTTP problem+json body and the library's `SlotwiseError` both read it.
 */
import { Schema } from "effect"
import { Reason, Slot } from "./slot.js"

export const FieldError = Schema.Struct({
  path: Schema.String.annotations({ description: "the field, as dotted keys and indexes (`client.email`, `weekdays.2`); empty for the body as a whole" }),
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
export class InvalidTransition extends Schema.TaggedError<InvalidTransition>()("InvalidTransition", detail) {}
export class ResourceInUse extends Schema.TaggedError<ResourceInUse>()("ResourceInUse", detail) {}
/** A client acting through a manage link too close to the start (the service's cancellation notice). */
export class NoticePeriodPassed extends Schema.TaggedError<NoticePeriodPassed>()("NoticePeriodPassed", detail) {}
export class HoldExpired extends Schema.TaggedError<HoldExpired>()("HoldExpired", detail) {}
export class Unauthorized extends Schema.TaggedError<Unauthorized>()("Unauthorized", detail) {}
export class Forbidden extends Schema.TaggedError<Forbidden>()("Forbidden", detail) {}
export class RateLimited extends Schema.TaggedError<RateLimited>()("RateLimited", {
  ...detail,
  retry_after_seconds: Schema.Int
}) {}
export class IdempotencyConflict extends Schema.TaggedError<IdempotencyConflict>()("IdempotencyConflict", detail) {}
export class IdempotencyMismatch extends Schema.TaggedError<IdempotencyMismatch>()("IdempotencyMismatch", detail) {}
/** A repeat of a request whose response carried a secret: secrets are shown once, never stored for replay. */
export class IdempotencySecretWithheld
  extends Schema.TaggedError<IdempotencySecretWithheld>()("IdempotencySecretWithheld", detail)
{}
export class StorageFailure extends Schema.TaggedError<StorageFailure>()("StorageFailure", {
  ...detail,
  cause: Schema.optional(Schema.Defect)
}) {}

export type SlotwiseFailure =
  | BadRequest
  | ValidationFailed
  | InvalidReference
  | NotFound
  | SlotUnavailable
  | OutsideAvailability
  | InvalidTransition
  | ResourceInUse
  | HoldExpired
  | NoticePeriodPassed
  | Unauthorized
  | Forbidden
  | RateLimited
  | IdempotencyConflict
  | IdempotencyMismatch
  | IdempotencySecretWithheld
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
  InvalidTransition: { code: "invalid_transition", status: 409, title: "Invalid status transition" },
  ResourceInUse: { code: "resource_in_use", status: 409, title: "Resource in use" },
  HoldExpired: { code: "hold_expired", status: 409, title: "Hold expired" },
  NoticePeriodPassed: { code: "notice_period_passed", status: 409, title: "Notice period passed" },
  Unauthorized: { code: "unauthorized", status: 401, title: "Unauthorized" },
  Forbidden: { code: "forbidden", status: 403, title: "Forbidden" },
  RateLimited: { code: "rate_limited", status: 429, title: "Too many requests" },
  IdempotencyConflict: { code: "idempotency_conflict", status: 409, title: "Idempotency key in use" },
  IdempotencyMismatch: { code: "idempotency_mismatch", status: 422, title: "Idempotency key reused" },
  IdempotencySecretWithheld: { code: "idempotency_secret_withheld", status: 409, title: "Secret not replayed" },
  StorageFailure: { code: "internal_error", status: 500, title: "Internal error" }
}

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
}

export const toProblem = (error: SlotwiseFailure): Problem => {
  const info = ErrorCatalog[error._tag]
  // A fault's detail may carry internals; a client only learns that it happened.
  const detailText = error._tag === "StorageFailure" ? "An internal error occurred." : error.detail
  return {
    type: PROBLEM_TYPE_BASE + info.code,
    title: info.title,
    status: info.status,
    code: info.code,
    detail: detailText,
    ...("errors" in error ? { errors: error.errors } : {}),
    ...("alternatives" in error ? { alternatives: error.alternatives, reasons: error.reasons } : {})
  }
}

export const isSlotwiseFailure = (u: unknown): u is SlotwiseFailure =>
  typeof u === "object" && u !== null && "_tag" in u && typeof u._tag === "string" && Object.hasOwn(ErrorCatalog, u._tag)
