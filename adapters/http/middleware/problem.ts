/**
 * Every failure as an RFC 9457 problem response: core failures with their catalogue entry,
 * transport failures (405/413/415), the platform's decode errors (400 for a query, 422 for a
 * body, each field listed), storage out of reach as a 503 with `Retry-After`, and anything
 * else as a 500 that says nothing of its cause.
 * Whatever a problem echoes of the request (an id, a path) is cut short.
 */
import { HttpApiError, HttpServerError, HttpServerResponse } from "@effect/platform"
import { Cause, Effect, Option } from "effect"
import {
  BadRequest,
  type FieldError,
  isSlotwiseFailure,
  isStorageUnavailable,
  NotFound,
  PROBLEM_TYPE_BASE,
  type Problem,
  STORAGE_RETRY_AFTER_SECONDS,
  toProblem,
  ValidationFailed
} from "../../../src/domain/errors.js"
import { MANAGE_PATH, UNKNOWN_LINK_DETAIL } from "../../../src/manage/manageLink.js"
import { isWellFormedId } from "../../../src/domain/ids.js"
import { fieldErrorsDetail, fieldErrorsOf } from "../../../src/domain/validation.js"
import { PROBLEM_CONTENT_TYPE, type TransportFailure, transportProblem } from "../contract/problems.js"

export const problemResponse = (problem: Problem, headers: Record<string, string> = {}) =>
  HttpServerResponse.unsafeJson(clipped(problem), { status: problem.status, contentType: PROBLEM_CONTENT_TYPE, headers })

const isTransport = (u: unknown): u is TransportFailure =>
  typeof u === "object" && u !== null && "_tag" in u &&
  (u._tag === "MethodNotAllowed" || u._tag === "PayloadTooLarge" || u._tag === "UnsupportedMediaType")

const INTERNAL: Problem = {
  type: `${PROBLEM_TYPE_BASE}internal_error`,
  title: "Internal error",
  status: 500,
  code: "internal_error",
  detail: "An internal error occurred."
}

/**
 * The platform's decode error as field errors. Bodies and queries are decoded by
 * `decodedAs` (contract/common.ts), whose issues already carry the core's messages, one per
 * field; a path parameter's issue gets the same treatment here.
 */
const fieldErrors = (issues: HttpApiError.HttpApiDecodeError["issues"]): Array<FieldError> => {
  const seen = new Set<string>()
  const errors: Array<FieldError> = []
  for (const issue of issues) {
    const path = issue.path.map(String).join(".")
    if (seen.has(path)) continue
    seen.add(path)
    errors.push({
      path,
      message: issue._tag === "Unexpected" ? "is not a known field" : issue._tag === "Missing" ? "is required" : issue.message
    })
  }
  return errors
}

const decodeProblem = (error: HttpApiError.HttpApiDecodeError, method: string): Problem => {
  const errors = fieldErrors(error.issues)
  const detail = fieldErrorsDetail(errors)
  // Only GETs (and DELETEs) carry query parameters and no body; every other decode is of a body.
  return method === "GET" || method === "HEAD" || method === "DELETE"
    ? toProblem(new BadRequest({ detail: `invalid query: ${detail}`, errors }))
    : toProblem(new ValidationFailed({ detail, errors }))
}

const ECHO_LIMIT = 100

/** Text a client sent, echoed in a problem, kept short: each long run cut to 100 characters. */
const clip = (text: string): string =>
  text.length <= ECHO_LIMIT ? text : text.replace(/\S{101,}/g, (run) => `${run.slice(0, ECHO_LIMIT)}…`).slice(0, 10 * ECHO_LIMIT)

const clipped = (problem: Problem): Problem => {
  const errors = (problem as { errors?: ReadonlyArray<FieldError> }).errors
  return {
    ...problem,
    detail: clip(problem.detail),
    ...(errors !== undefined ? { errors: errors.map((e) => ({ path: clip(e.path), message: clip(e.message) })) } : {})
  }
}

/** How the API's own path words and ids are written. */
const PATH_WORD = /^[a-z][a-z0-9-]{0,31}$/

/** A path segment as a problem repeats it: whole when it is a path word or an id, else its first four characters. */
const shownSegment = (segment: string): string =>
  segment === "" || PATH_WORD.test(segment) || isWellFormedId(segment) ? segment : `${segment.slice(0, 4)}…`

/**
 * A request path as a problem repeats it: a segment can hold anything a client put there, a
 * pasted secret too, so only what looks like the API's own words and ids is repeated whole.
 */
export const shownPath = (path: string): string => path.split("/").map(shownSegment).join("/")

/** The 404 of a path no route takes, or one the caller may not know of. */
export const noRoute = (method: string, path: string): NotFound => new NotFound({ detail: `no route for ${method} ${shownPath(path)}` })

/**
 * The router gives up on a path segment longer than 100 characters (the length of any of our
 * ids) before the route is matched; such a segment names no resource.
 */
const notFoundError = (method: string, url: string): NotFound => {
  const path = url.split("?")[0]!
  // A manage token too long to route is a token that opens no booking: the same answer as any other.
  if (path.startsWith(MANAGE_PATH)) return new NotFound({ detail: UNKNOWN_LINK_DETAIL })
  const segments = path.split("/")
  const long = segments.findIndex((segment) => segment.length > ECHO_LIMIT)
  return long > 0
    ? new NotFound({ detail: `no resource with id ${shownSegment(segments[long]!)} under ${shownPath(segments.slice(0, long).join("/"))}` })
    : noRoute(method, path)
}

/** The problem response of a failure, or `undefined` for an interruption (the client left). */
export const responseOfCause = (
  cause: Cause.Cause<unknown>,
  method: string,
  presentedCredential: boolean
): Effect.Effect<HttpServerResponse.HttpServerResponse | undefined> =>
  Effect.suspend(() => {
    if (Cause.isInterruptedOnly(cause)) return Effect.succeed(undefined)
    const failure = Cause.failureOption(cause)
    const error: unknown = Option.isSome(failure) ? failure.value : Cause.squash(cause)
    if (isSlotwiseFailure(error) && isStorageUnavailable(error)) {
      return Effect.as(
        Effect.logWarning("slotwise http: storage unavailable", error.detail),
        problemResponse(toProblem(error), { "retry-after": String(STORAGE_RETRY_AFTER_SECONDS) })
      )
    }
    if (isSlotwiseFailure(error) && error._tag !== "StorageFailure") {
      const headers: Record<string, string> = {}
      if (error._tag === "RateLimited") headers["retry-after"] = String(error.retry_after_seconds)
      if (error._tag === "Unauthorized") {
        headers["www-authenticate"] = presentedCredential
          ? "Bearer realm=\"slotwise\", error=\"invalid_token\""
          : "Bearer realm=\"slotwise\""
      }
      return Effect.succeed(problemResponse(toProblem(error), headers))
    }
    if (isTransport(error)) {
      const headers: Record<string, string> = error._tag === "MethodNotAllowed" ? { allow: error.allow.join(", ") } : {}
      return Effect.succeed(problemResponse(transportProblem(error), headers))
    }
    if (error instanceof HttpApiError.HttpApiDecodeError) return Effect.succeed(problemResponse(decodeProblem(error, method)))
    if (HttpServerError.isServerError(error) && error._tag === "RouteNotFound") {
      return Effect.succeed(problemResponse(toProblem(notFoundError(method, error.request.url))))
    }
    return Effect.as(
      Effect.logError("slotwise http: internal error", cause),
      problemResponse(INTERNAL)
    )
  })

export { fieldErrorsOf }
