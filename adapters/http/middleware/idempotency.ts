/**
 * Idempotency step for POSTs with an `Idempotency-Key`: replay a kept response, or claim
 * the key, run the request and keep what it answered. Responses of 500 and above are not
 * kept (the key is freed for a retry; what its writes committed stays, and the retry is given
 * it: src/idempotency/Idempotency.ts `running`). A response that carried a secret is kept without it,
 * and its repeat is refused (`idempotency_secret_withheld`): secrets are shown once.
 */
import { HttpApp, HttpServerResponse } from "@effect/platform"
import { Effect } from "effect"
import type { Principal } from "../../../src/keys/ApiKeys.js"
import { type Idempotency, parseIdempotencyKey, secretWithheld, type StoredResponse } from "../../../src/idempotency/Idempotency.js"
import { type Visitor, visitorIdempotencyKey } from "../../../src/domain/visitor.js"
import { Tenant } from "../../../src/ports/tenant.js"
import { responseOfCause } from "./problem.js"

const REPLAYED = { "idempotent-replayed": "true" }
const decoder = new TextDecoder()

const parseObject = (text: string): Record<string, unknown> | undefined => {
  try {
    const value: unknown = JSON.parse(text)
    return typeof value === "object" && value !== null && !Array.isArray(value) ? value as Record<string, unknown> : undefined
  } catch {
    return undefined
  }
}

/** What a record keeps of a response: a secret (new API key, `whsec_`) is left out. */
const toStored = (response: HttpServerResponse.HttpServerResponse): StoredResponse => {
  const body = response.body
  const text = body._tag === "Uint8Array"
    ? decoder.decode(body.body)
    : body._tag === "Raw" && typeof body.body === "string"
    ? body.body
    : ""
  const content_type = body._tag === "Empty" ? null : (body.contentType ?? null)
  const parsed = content_type?.includes("json") === true && text.includes("\"secret\"") ? parseObject(text) : undefined
  if (parsed !== undefined && typeof parsed.secret === "string") {
    const { secret: _withheld, ...rest } = parsed
    return { status: response.status, content_type, body: JSON.stringify(rest), secret_withheld: true }
  }
  return { status: response.status, content_type, body: text }
}

const replay = (stored: StoredResponse) => {
  if (stored.secret_withheld === true) {
    const created = parseObject(stored.body)
    return Effect.zipRight(
      HttpApp.appendPreResponseHandler((_, res) => Effect.succeed(HttpServerResponse.setHeaders(res, REPLAYED))),
      Effect.fail(secretWithheld({
        object: typeof created?.object === "string" ? created.object : null,
        id: typeof created?.id === "string" ? created.id : null
      }))
    )
  }
  return Effect.succeed(
    stored.content_type === null
      ? HttpServerResponse.empty({ status: stored.status, headers: REPLAYED })
      : HttpServerResponse.text(stored.body, { status: stored.status, contentType: stored.content_type, headers: REPLAYED })
  )
}

export interface IdempotentRequest {
  readonly header: string
  readonly method: string
  readonly path: string
  readonly body: unknown
  readonly principal: Principal
  /** The visitor a publishable key acts for: its keys are kept apart from the account's. */
  readonly visitor?: Visitor | undefined
}

/** Runs `run` at most once per key and request; repeats get its kept response. */
export const makeIdempotent =
  (idempotency: Idempotency) => <E, R>(request: IdempotentRequest, run: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>) =>
    // The caller's tenant once around the whole step (claim, run, keep): each provide copies the context.
    Effect.provideService(
      Effect.gen(function*() {
        const parsed = yield* parseIdempotencyKey(request.header)
        const key = request.visitor === undefined ? parsed : visitorIdempotencyKey(request.visitor, parsed)
        const fingerprint = yield* idempotency.fingerprint(request.method, request.path, request.body)
        const claim = yield* idempotency.begin(key, fingerprint)
        if (claim._tag === "Replay") return yield* replay(claim.response)
        return yield* Effect.uninterruptible(Effect.gen(function*() {
          const exit = yield* Effect.exit(idempotency.running(key, claim.results, run))
          const response = exit._tag === "Success"
            ? exit.value
            : yield* responseOfCause(exit.cause, request.method, true)
          if (response === undefined || response.status >= 500) {
            yield* Effect.ignore(idempotency.release(key))
            return yield* (exit._tag === "Failure" ? Effect.failCause(exit.cause) : Effect.succeed(response!))
          }
          yield* idempotency.complete(key, toStored(response)).pipe(
            Effect.catchAll((error) => Effect.logError("slotwise http: could not store idempotent response", error))
          )
          return response
        }))
      }),
      Tenant,
      request.principal.tenant
    )
