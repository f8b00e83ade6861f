/**
 * The request pipeline: one API-level middleware that every request passes through, known
 * route or not, so every response (errors, 401s, 404s, 405s included) is a problem on
 * failure and carries the rate-limit headers. In order:
 *
 *  1. strip the mount prefix; answer CORS preflights;
 *  2. find the route (404 / 405 come after counting the request);
 *  3. authenticate the bearer: an API key, or the operator's token on /admin routes;
 *  4. count the request against its credential (else its client IP) and set the headers;
 *  5. refuse what the credential may not do (401, 403 scope, publishable key limits, origins);
 *  6. read and check the body (415, 413, 400); fold a JSON body into GET /v1/bookings' query;
 *  7. replay or claim an `Idempotency-Key` on POSTs;
 *  8. run the router, and render any failure as a problem.
 */
import { HttpApp, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Effect, Option } from "effect"
import { Accounts } from "../../../src/Accounts.js"
import { ApiKeys, type Principal } from "../../../src/ApiKeys.js"
import { parseSecretPrefix } from "../../../src/domain/apiKey.js"
import { OAuthGrants } from "../../../src/OAuthGrants.js"
import { constantTimeEqual } from "../../../src/auth/crypto.js"
import { BadRequest, Forbidden, IdempotencySecretWithheld, NotFound, RateLimited, Unauthorized } from "../../../src/domain/errors.js"
import { Idempotency, parseIdempotencyKey, type StoredResponse } from "../../../src/Idempotency.js"
import { headersOf, type Policy, policyForAddress, policyForKey } from "../../../src/ratelimit/policy.js"
import { RateLimiter } from "../../../src/ratelimit/RateLimiter.js"
import { Tenant } from "../../../src/ports/tenant.js"
import { SlotwiseApi } from "../api.js"
import { publicAccess, requiredScopes } from "../contract/access.js"
import { MethodNotAllowed, UnsupportedMediaType } from "../contract/problems.js"
import { hasBody, isJsonContentType, readJsonBody, withParsedBody } from "./body.js"
import { responseOfCause } from "./problem.js"
import { makeRouteTable } from "./routes.js"
import { currentAuth } from "./state.js"

export interface PipelineOptions {
  /** The operator's bearer token; without it the /admin routes do not exist (404). */
  readonly adminToken?: string | undefined
  /** A path prefix the API is mounted under (`/scheduling`), stripped before routing. */
  readonly prefix?: string | undefined
  /** Take the client address from `X-Forwarded-For` (behind a trusted proxy only). */
  readonly trustProxy?: boolean | undefined
}

export const OPENAPI_PATH = "/v1/openapi.json"
export const DOCS_PATH = "/docs"

const routes = makeRouteTable(SlotwiseApi, [
  { method: "GET", path: OPENAPI_PATH, access: publicAccess },
  { method: "GET", path: DOCS_PATH, access: publicAccess }
])

/** The operator's requests are counted too, generously. */
const OPERATOR_POLICY: Policy = { key: "operator", name: "operator", limit: 100_000 }

const CORS_EXPOSED = [
  "x-ratelimit-limit",
  "x-ratelimit-remaining",
  "x-ratelimit-reset",
  "ratelimit",
  "ratelimit-policy",
  "retry-after",
  "idempotent-replayed"
].join(", ")

const bearerOf = (authorization: string | undefined): string | undefined => {
  if (authorization === undefined) return undefined
  const m = /^\s*bearer\s+(.*?)\s*$/i.exec(authorization)
  return m === null ? "" : m[1]!
}

const clientAddress = (request: HttpServerRequest.HttpServerRequest, trustProxy: boolean): string => {
  if (trustProxy) {
    const forwarded = request.headers["x-forwarded-for"]?.split(",")[0]?.trim()
    if (forwarded) return forwarded
  }
  return Option.getOrElse(request.remoteAddress, () => "unknown")
}

/** A JSON body on GET /v1/bookings becomes query parameters; the query string wins. */
const foldIntoQuery = (request: HttpServerRequest.HttpServerRequest, value: unknown) =>
  Effect.suspend(() => {
    if (value === null || typeof value !== "object" || Array.isArray(value)) {
      return Effect.fail(new BadRequest({
        detail: "a JSON body on GET /v1/bookings must be an object of filters",
        errors: [{ path: "", message: "must be an object" }]
      }))
    }
    const [path, search = ""] = request.url.split("?", 2) as [string, string?]
    const params = new URLSearchParams(search)
    for (const [name, v] of Object.entries(value)) {
      if (params.has(name) || v === null || v === undefined) continue
      for (const item of Array.isArray(v) ? v : [v]) {
        params.append(name, typeof item === "object" ? JSON.stringify(item) : String(item))
      }
    }
    const query = params.toString()
    return Effect.succeed(request.modify({ url: query === "" ? path : `${path}?${query}` }))
  })

/**
 * What an idempotency record keeps of a response. Secrets (new API keys, `whsec_` webhook
 * secrets) are shown once and otherwise exist only hashed or encrypted at their source, so
 * a response that carries one is kept without it.
 */
const toStored = (response: HttpServerResponse.HttpServerResponse): StoredResponse => {
  const body = response.body
  const text = body._tag === "Uint8Array" ? new TextDecoder().decode(body.body) : body._tag === "Raw" && typeof body.body === "string" ? body.body : ""
  const content_type = body._tag === "Empty" ? null : (body.contentType ?? null)
  const parsed = content_type?.includes("json") === true && text.includes("\"secret\"") ? parseObject(text) : undefined
  if (parsed !== undefined && typeof parsed.secret === "string") {
    const { secret: _withheld, ...rest } = parsed
    return { status: response.status, content_type, body: JSON.stringify(rest), secret_withheld: true }
  }
  return { status: response.status, content_type, body: text }
}

const parseObject = (text: string): Record<string, unknown> | undefined => {
  try {
    const value: unknown = JSON.parse(text)
    return typeof value === "object" && value !== null && !Array.isArray(value) ? value as Record<string, unknown> : undefined
  } catch {
    return undefined
  }
}

const REPLAYED = { "idempotent-replayed": "true" }

const replay = (stored: StoredResponse) => {
  if (stored.secret_withheld === true) {
    const created = parseObject(stored.body)
    const what = typeof created?.id === "string" ? `${String(created.object ?? "resource")} ${created.id}` : "the resource"
    return Effect.zipRight(
      HttpApp.appendPreResponseHandler((_, res) => Effect.succeed(HttpServerResponse.setHeaders(res, REPLAYED))),
      Effect.fail(
        new IdempotencySecretWithheld({
          detail: `the first request with this Idempotency-Key succeeded and created ${what}; its secret was ` +
            "shown once in that response and is not kept for replays: rotate it if it was lost"
        })
      )
    )
  }
  return Effect.succeed(
    stored.content_type === null
      ? HttpServerResponse.empty({ status: stored.status, headers: REPLAYED })
      : HttpServerResponse.text(stored.body, { status: stored.status, contentType: stored.content_type, headers: REPLAYED })
  )
}

export const makePipeline = (options: PipelineOptions = {}) =>
  Effect.gen(function*() {
    const apiKeys = yield* ApiKeys
    const oauthGrants = yield* OAuthGrants
    const accounts = yield* Accounts
    const limiter = yield* RateLimiter
    const idempotency = yield* Idempotency
    const adminToken = options.adminToken !== undefined && options.adminToken.length > 0 ? options.adminToken : undefined
    const prefix = options.prefix?.replace(/\/+$/, "") || undefined
    const trustProxy = options.trustProxy === true

    return (app: HttpApp.Default): HttpApp.Default =>
      Effect.gen(function*() {
        let request = yield* HttpServerRequest.HttpServerRequest
        const method = request.method
        let presented = false

        const handled = Effect.gen(function*() {
          if (prefix !== undefined) {
            const url = request.url
            if (url === prefix || url.startsWith(`${prefix}/`) || url.startsWith(`${prefix}?`)) {
              request = request.modify({ url: url.slice(prefix.length) || "/" })
            }
          }
          const headers = request.headers
          const path = request.url.split("?", 1)[0]!
          const origin = headers.origin

          // 1. CORS preflight: it carries no credential, so any account's origin is let through.
          if (method === "OPTIONS" && headers["access-control-request-method"] !== undefined) {
            const decision = yield* limiter.check(policyForAddress(clientAddress(request, trustProxy)))
            const rateHeaders = headersOf(decision)
            yield* HttpApp.appendPreResponseHandler((_, res) => Effect.succeed(HttpServerResponse.setHeaders(res, rateHeaders)))
            if (!decision.allowed) {
              return yield* new RateLimited({ detail: "too many requests", retry_after_seconds: decision.reset_seconds })
            }
            if (origin === undefined || !(yield* accounts.originAllowedAnywhere(origin))) {
              return yield* new Forbidden({ detail: `origin ${origin ?? "(none)"} is not allowed` })
            }
            return HttpServerResponse.empty({
              status: 204,
              headers: {
                "access-control-allow-origin": origin,
                "access-control-allow-methods": "GET, POST, DELETE",
                "access-control-allow-headers": "authorization, content-type, idempotency-key",
                "access-control-max-age": "600",
                vary: "Origin"
              }
            })
          }

          // 2. The route.
          const route = routes.match(method, path)
          const access = route._tag === "Found" ? route.access : undefined

          // 3. Who is calling.
          const bearer = bearerOf(headers.authorization)
          presented = bearer !== undefined && bearer !== ""
          let principal: Principal | undefined
          let authFailure: Unauthorized | undefined
          let operator = false
          if (access?.auth === "admin") {
            operator = adminToken !== undefined && bearer !== undefined && constantTimeEqual(bearer, adminToken)
          } else if (presented) {
            // An API key by its prefix; anything else is tried as an OAuth access token.
            const outcome = yield* Effect.either(
              parseSecretPrefix(bearer!) !== undefined ? apiKeys.authenticate(bearer!) : oauthGrants.authenticate(bearer!)
            )
            if (outcome._tag === "Right") principal = outcome.right
            else if (outcome.left._tag === "Unauthorized") authFailure = outcome.left
            else return yield* outcome.left
          }

          // 4. Count the request; every response from here on carries the figures.
          const policy = principal !== undefined
            ? policyForKey(principal.account, principal.key.id)
            : operator
            ? OPERATOR_POLICY
            : policyForAddress(clientAddress(request, trustProxy))
          const decision = yield* limiter.check(policy)
          const responseHeaders: Record<string, string> = headersOf(decision)
          const corsAllowed = origin !== undefined && principal?.key.type === "publishable" &&
            principal.account.allowed_origins.includes(origin)
          if (corsAllowed) {
            responseHeaders["access-control-allow-origin"] = origin!
            responseHeaders["access-control-expose-headers"] = CORS_EXPOSED
            responseHeaders["vary"] = "Origin"
          }
          yield* HttpApp.appendPreResponseHandler((_, res) => Effect.succeed(HttpServerResponse.setHeaders(res, responseHeaders)))
          if (!decision.allowed) {
            return yield* new RateLimited({
              detail: `rate limit of ${decision.limit} requests per minute exceeded; retry in ${decision.reset_seconds} s`,
              retry_after_seconds: decision.reset_seconds
            })
          }

          // 5. What the caller may do here.
          if (route._tag === "NotFound" || (access?.auth === "admin" && !operator)) {
            return yield* new NotFound({ detail: `no route for ${method} ${path}` })
          }
          if (route._tag === "MethodNotAllowed") {
            return yield* new MethodNotAllowed({ detail: `${method} is not allowed on ${path}`, allow: route.allow })
          }
          if (access?.auth === "key") {
            if (principal === undefined) {
              return yield* (authFailure ?? new Unauthorized({
                detail: bearer === undefined ? "no credential: send Authorization: Bearer <API key>" : "empty bearer credential"
              }))
            }
            if (principal.key.type === "publishable") {
              if (!access.publishable) {
                return yield* new Forbidden({
                  detail: "publishable keys may only read services, staff and slots, hold slots and create bookings"
                })
              }
              if (!corsAllowed) {
                return yield* new Forbidden({
                  detail: `publishable keys work only from the account's allowed origins; ${origin ?? "no Origin"} is not one`
                })
              }
            }
            const missing = requiredScopes(access).filter((scope) => !principal!.key.scopes.includes(scope))
            if (missing.length > 0) {
              return yield* new Forbidden({
                detail: `the API key lacks the scope${missing.length > 1 ? "s" : ""} ${missing.join(", ")}`
              })
            }
          }

          // 6. The body.
          let parsedValue: unknown = undefined
          if (method === "POST" || method === "PATCH" || method === "PUT") {
            const parsed = yield* readJsonBody(request)
            parsedValue = parsed.value
            request = withParsedBody(request, parsed)
          } else if ((method === "GET" || method === "HEAD") && path === "/v1/bookings" && hasBody(request)) {
            const type = request.headers["content-type"]
            // curl -d sends form-urlencoded by default: accept JSON under that label here too.
            if (type !== undefined && !isJsonContentType(type) && !type.startsWith("application/x-www-form-urlencoded")) {
              return yield* new UnsupportedMediaType({ detail: `the filters body must be application/json, not ${type}` })
            }
            const parsed = yield* readJsonBody(request.modify({ headers: { ...request.headers, "content-type": "application/json" } }))
            request = yield* foldIntoQuery(request, parsed.value)
          }

          const run = Effect.locally(
            Effect.provideService(app, HttpServerRequest.HttpServerRequest, request),
            currentAuth,
            { principal, operator }
          )

          // 7. Idempotency.
          const idempotencyHeader = request.headers["idempotency-key"]
          if (method === "POST" && principal !== undefined && idempotencyHeader !== undefined) {
            const key = yield* parseIdempotencyKey(idempotencyHeader)
            const tenant = principal.tenant
            const fingerprint = yield* idempotency.fingerprint(method, path, parsedValue)
            const claim = yield* Effect.provideService(idempotency.begin(key, fingerprint), Tenant, tenant)
            if (claim._tag === "Replay") return yield* replay(claim.response)
            return yield* Effect.uninterruptible(Effect.gen(function*() {
              const exit = yield* Effect.exit(run)
              const response = exit._tag === "Success" ? exit.value : yield* responseOfCause(exit.cause, method, presented)
              if (response === undefined || response.status >= 500) {
                yield* Effect.ignore(Effect.provideService(idempotency.release(key), Tenant, tenant))
                return yield* (exit._tag === "Failure" ? Effect.failCause(exit.cause) : Effect.succeed(response!))
              }
              yield* Effect.provideService(idempotency.complete(key, toStored(response)), Tenant, tenant).pipe(
                Effect.catchAll((error) => Effect.logError("slotwise http: could not store idempotent response", error))
              )
              return response
            }))
          }

          // 8. The route.
          return yield* run
        })

        return yield* handled.pipe(
          Effect.catchAllCause((cause) =>
            Effect.flatMap(responseOfCause(cause, method, presented), (response) =>
              response === undefined ? Effect.failCause(cause) : Effect.succeed(response))
          )
        )
      }) as HttpApp.Default
  })
