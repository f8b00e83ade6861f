/**
 * Errors on the wire: RFC 9457 problem details (`application/problem+json`). Each core
 * failure gets a schema whose decoded side is the core's typed error and whose encoded side
 * is its problem document (`toProblem`), with the catalogue's status, so handlers fail with
 * core errors and the OpenAPI document shows each problem. Transport-level problems the core
 * never raises (405, 413, 415) are declared here.
 */
import { HttpApiSchema } from "@effect/platform"
import { Schema } from "effect"
import {
  BadRequest,
  DomainTaken,
  HandleTaken,
  ErrorCatalog,
  FieldError,
  Forbidden,
  HoldExpired,
  HoldLimitReached,
  IdempotencyConflict,
  IdempotencyMismatch,
  InvalidReference,
  InvalidTransition,
  NotFound,
  NoticePeriodPassed,
  OutsideAvailability,
  PlanRequired,
  PROBLEM_TYPE_BASE,
  type Problem,
  RateLimited,
  ResourceInUse,
  SeriesUnavailable,
  SlotUnavailable,
  StorageFailure,
  toProblem,
  Unauthorized,
  ValidationFailed,
  VerificationFailed
} from "../../../src/domain/errors.js"
import { BlockedOccurrence, Reason, Slot } from "../../../src/domain/slot.js"

export const PROBLEM_CONTENT_TYPE = "application/problem+json"

/** Failures of HTTP itself, before any use case runs. */
export class MethodNotAllowed extends Schema.TaggedError<MethodNotAllowed>()("MethodNotAllowed", {
  detail: Schema.String,
  allow: Schema.Array(Schema.String)
}) {}
export class PayloadTooLarge extends Schema.TaggedError<PayloadTooLarge>()("PayloadTooLarge", { detail: Schema.String }) {}
export class UnsupportedMediaType extends Schema.TaggedError<UnsupportedMediaType>()("UnsupportedMediaType", {
  detail: Schema.String
}) {}

export const TransportCatalog = {
  MethodNotAllowed: { code: "method_not_allowed", status: 405, title: "Method not allowed" },
  PayloadTooLarge: { code: "payload_too_large", status: 413, title: "Payload too large" },
  UnsupportedMediaType: { code: "unsupported_media_type", status: 415, title: "Unsupported media type" }
} as const

export type TransportFailure = MethodNotAllowed | PayloadTooLarge | UnsupportedMediaType

export const transportProblem = (error: TransportFailure): Problem => {
  const info = TransportCatalog[error._tag]
  return { type: PROBLEM_TYPE_BASE + info.code, title: info.title, status: info.status, code: info.code, detail: error.detail }
}

interface ErrorClass<E> {
  new(args: any): E
  readonly fields?: Schema.Struct.Fields
}

/** The problem schema of one error class: its code and status fixed, its extra members typed. */
const problemSchema = <E extends { readonly _tag: string }>(
  errorClass: ErrorClass<E>,
  info: { readonly code: string; readonly status: number; readonly title: string },
  options: {
    readonly fields?: "errors" | "unbookable" | "occurrences" | undefined
    readonly toProblem: (e: E) => Problem
    readonly fromProblem: (p: any) => E
  }
) => {
  const fields: Schema.Struct.Fields = {
    type: Schema.Literal(PROBLEM_TYPE_BASE + info.code).annotations({ description: "URI naming the kind of problem" }),
    title: Schema.String.annotations({ description: "the kind of problem in a few words" }),
    status: Schema.Literal(info.status).annotations({ description: "the HTTP status code" }),
    code: Schema.Literal(info.code).annotations({ description: "stable code to branch on" }),
    detail: Schema.String.annotations({ description: "what went wrong with this request" }),
    ...(options.fields === "errors"
      ? { errors: Schema.Array(FieldError).annotations({ description: "one entry per invalid field" }) }
      : {}),
    ...(options.fields === "unbookable"
      ? {
        alternatives: Schema.Array(Slot).annotations({ description: "up to 3 nearest free slots of the same service and staff member" }),
        reasons: Schema.Array(Reason).annotations({ description: "every check the start failed" })
      }
      : {}),
    ...(options.fields === "occurrences"
      ? { occurrences: Schema.Array(BlockedOccurrence).annotations({ description: "every occurrence that cannot be booked, with why" }) }
      : {})
  }
  const wire = Schema.Struct(fields).annotations({ identifier: `Problem.${info.code}`, title: info.title }) as unknown as Schema.Schema<
    Problem,
    Problem
  >
  return Schema.transform(wire, Schema.declare((u): u is E => u instanceof errorClass), {
    strict: false,
    decode: options.fromProblem,
    encode: options.toProblem
  }).pipe(
    HttpApiSchema.withEncoding({ kind: "Json", contentType: PROBLEM_CONTENT_TYPE }),
    (schema) => schema.annotations(HttpApiSchema.annotations({ status: info.status }))
  )
}

const core = <E extends Parameters<typeof toProblem>[0]>(
  errorClass: ErrorClass<E>,
  tag: E["_tag"],
  fields?: "errors" | "unbookable" | "occurrences"
) =>
  problemSchema(errorClass, ErrorCatalog[tag], {
    fields,
    toProblem: (e) => toProblem(e),
    fromProblem: (p) =>
      new errorClass({
        detail: p.detail,
        ...(fields === "errors" ? { errors: p.errors } : {}),
        ...(fields === "unbookable" ? { reasons: p.reasons, alternatives: p.alternatives } : {}),
        ...(fields === "occurrences" ? { occurrences: p.occurrences } : {}),
        ...(tag === "RateLimited" ? { retry_after_seconds: 0 } : {})
      })
  })

export const BadRequestProblem = core(BadRequest, "BadRequest", "errors")
export const ValidationFailedProblem = core(ValidationFailed, "ValidationFailed", "errors")
export const InvalidReferenceProblem = core(InvalidReference, "InvalidReference", "errors")
export const NotFoundProblem = core(NotFound, "NotFound")
export const SlotUnavailableProblem = core(SlotUnavailable, "SlotUnavailable", "unbookable")
export const OutsideAvailabilityProblem = core(OutsideAvailability, "OutsideAvailability", "unbookable")
export const SeriesUnavailableProblem = core(SeriesUnavailable, "SeriesUnavailable", "occurrences")
export const InvalidTransitionProblem = core(InvalidTransition, "InvalidTransition")
export const ResourceInUseProblem = core(ResourceInUse, "ResourceInUse")
export const HoldExpiredProblem = core(HoldExpired, "HoldExpired")
export const HoldLimitReachedProblem = core(HoldLimitReached, "HoldLimitReached")
export const NoticePeriodPassedProblem = core(NoticePeriodPassed, "NoticePeriodPassed")
export const UnauthorizedProblem = core(Unauthorized, "Unauthorized")
export const ForbiddenProblem = core(Forbidden, "Forbidden")
export const RateLimitedProblem = core(RateLimited, "RateLimited")
export const IdempotencyConflictProblem = core(IdempotencyConflict, "IdempotencyConflict")
export const IdempotencyMismatchProblem = core(IdempotencyMismatch, "IdempotencyMismatch")
export const InternalErrorProblem = core(StorageFailure, "StorageFailure")
export const PlanRequiredProblem = core(PlanRequired, "PlanRequired")
export const DomainTakenProblem = core(DomainTaken, "DomainTaken")
export const HandleTakenProblem = core(HandleTaken, "HandleTaken")
export const VerificationFailedProblem = core(VerificationFailed, "VerificationFailed")

const transport = <E extends TransportFailure>(errorClass: ErrorClass<E>, tag: E["_tag"]) =>
  problemSchema(errorClass, TransportCatalog[tag], {
    toProblem: (e) => transportProblem(e),
    fromProblem: (p) => new errorClass({ detail: p.detail, ...(tag === "MethodNotAllowed" ? { allow: [] } : {}) })
  })

export const MethodNotAllowedProblem = transport(MethodNotAllowed, "MethodNotAllowed")
export const PayloadTooLargeProblem = transport(PayloadTooLarge, "PayloadTooLarge")
export const UnsupportedMediaTypeProblem = transport(UnsupportedMediaType, "UnsupportedMediaType")
