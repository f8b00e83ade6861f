/**
 * Every failure as an RFC 9457 problem response: core failures with their catalogue entry,
 * transport failures (405/413/415), the platform's decode errors (400 for a query, 422 for a
 * body, each field listed), and anything else as a 500 that says nothing of its cause.
 */
import { HttpApiError, HttpServerError, HttpServerResponse } from "@effect/platform"
import { Cause, Effect, Option } from "effect"
import {
  BadRequest,
  isSlotwiseFailure,
  NotFound,
  PROBLEM_TYPE_BASE,
  type Problem,
  toProblem,
  ValidationFailed
} from "../../../src/domain/errors.js"
import { fieldErrorsOf } from "../../../src/internal/validation.js"
import { PROBLEM_CONTENT_TYPE, type TransportFailure, transportProblem } from "../contract/problems.js"

export const problemResponse = (problem: Problem, headers: Record<string, string> = {}) =>
  HttpServerResponse.unsafeJson(problem, { status: problem.status, contentType: PROBLEM_CONTENT_TYPE, headers })

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
 * One entry per invalid field: a value that matches none of a set of literals reports the
 * set once (`must be one of "a", "b"`) rather than one "Expected" line per literal.
 */
const fieldErrors = (issues: HttpApiError.HttpApiDecodeError["issues"]) => {
  const byPath = new Map<string, Array<string>>()
  for (const issue of issues) {
    const path = issue.path.map(String).join(".")
    const message = issue._tag === "Unexpected" ? "is not a known field" : issue.message
    const list = byPath.get(path) ?? []
    if (!list.includes(message)) list.push(message)
    byPath.set(path, list)
  }
  return [...byPath].flatMap(([path, messages]) => {
    const expected = messages.map((m) => /^Expected (".*"), actual (.*)$/.exec(m))
    if (messages.length > 1 && expected.every((m) => m !== null)) {
      return [{ path, message: `must be one of ${expected.map((m) => m![1]).join(", ")} (got ${expected[0]![2]})` }]
    }
    return messages.map((message) => ({ path, message }))
  })
}

const decodeProblem = (error: HttpApiError.HttpApiDecodeError, method: string): Problem => {
  const errors = fieldErrors(error.issues)
  const detail = errors.length === 1
    ? `${errors[0]!.path || "body"} ${errors[0]!.message}`
    : `${errors.length} fields are invalid: ${errors.map((e) => e.path || "body").join(", ")}`
  // Only GETs (and DELETEs) carry query parameters and no body; every other decode is of a body.
  return method === "GET" || method === "HEAD" || method === "DELETE"
    ? toProblem(new BadRequest({ detail: `invalid query: ${detail}`, errors }))
    : toProblem(new ValidationFailed({ detail, errors }))
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
    if (isSlotwiseFailure(error) && error._tag !== "StorageFailure") {
      const headers: Record<string, string> = {}
      if (error._tag === "Unauthorized") {
        headers["www-authenticate"] = presentedCredential
          ? 'Bearer realm="slotwise", error="invalid_token"'
          : 'Bearer realm="slotwise"'
      }
      return Effect.succeed(problemResponse(toProblem(error), headers))
    }
    if (isTransport(error)) {
      const headers: Record<string, string> = error._tag === "MethodNotAllowed" ? { allow: error.allow.join(", ") } : {}
      return Effect.succeed(problemResponse(transportProblem(error), headers))
    }
    if (error instanceof HttpApiError.HttpApiDecodeError) return Effect.succeed(problemResponse(decodeProblem(error, method)))
    if (HttpServerError.isServerError(error) && error._tag === "RouteNotFound") {
      return Effect.succeed(problemResponse(toProblem(new NotFound({ detail: `no route for ${method} ${error.request.url.split("?")[0]}` }))))
    }
    return Effect.as(
      Effect.logError("slotwise http: internal error", cause),
      problemResponse(INTERNAL)
    )
  })

export { fieldErrorsOf }
