/**
 * The request pipeline: one API-level middleware that every request passes through, known
 * route or not, so every response (errors, 401s, 404s, 405s included) is a problem on
 * failure and carries the rate-limit headers. The steps, in order, each in its own module:
 *
 *  1. strip the mount prefix; answer CORS preflights (cors.ts);
 *  2. find the route (routes.ts; 404 / 405 come after counting the request);
 *  3. the gate (gate.ts): the bearer becomes a `Caller`, and the verdict on the call is
 *     reached (401, 403 scope, publishable key, origin: the core's `decideAccess`);
 *  4. count the request against its credential (a publishable key's per client address), else
 *     its client address (ratelimit.ts);
 *  5. answer 405, or the gate's refusal (404 for a hidden route, 401/403);
 *  6. read and check the body: 415, 413, 400 (body.ts);
 *  7. replay or claim an `Idempotency-Key` on POSTs (idempotency.ts);
 *  8. run the router, and render any failure as a problem (problem.ts).
 *
 * The gate's passage goes to the router in the request's context (gate.ts, `handOver`): the
 * groups' security middleware provides its principal and tenant to the handlers.
 */
import { type HttpApp, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Effect, Either, Option } from "effect"
import { Accounts } from "../../../src/accounts/Accounts.js"
import { type Caller, corsOrigin } from "../../../src/auth/access.js"
import { Domains } from "../../../src/domains/Domains.js"
import { Idempotency } from "../../../src/idempotency/Idempotency.js"
import { RateLimiter } from "../../../src/ratelimit/RateLimiter.js"
import { withoutTrailingSlash } from "../../../src/ports/trailingSlash.js"
import { SlotwiseApi } from "../api.js"
import { clientAddress } from "../clientAddress.js"
import { DOCS_PATH, DOCS_SCRIPT_PATH, OPENAPI_PATH } from "../docs.js"
import { publicAccess } from "../contract/access.js"
import { type BodyDecoder, rememberDecoded } from "../contract/decodedBodies.js"
import { refusedInput } from "../../../src/domain/validation.js"
import type { ValidationFailed } from "../../../src/domain/errors.js"
import { MethodNotAllowed } from "../contract/problems.js"
import { makeBrowserOrigin } from "../hostRouting.js"
import { presentedCredential } from "./authenticate.js"
import { readBody } from "./body.js"
import { addCorsHeaders, isPreflight, preflight } from "./cors.js"
import { Gate, handOver } from "./gate.js"
import { makeIdempotent } from "./idempotency.js"
import { noRoute, responseOfCause, shownPath } from "./problem.js"
import { countRequest, policyOf } from "./ratelimit.js"
import { makeRouteTable } from "./routes.js"

export interface PipelineOptions {
  /** The operator's bearer token; without it the /admin routes do not exist (404). */
  readonly adminToken?: string | undefined
  /** A path prefix the API is mounted under (`/scheduling`), stripped before routing. */
  readonly prefix?: string | undefined
  /** Take the client address from `X-Forwarded-For` (behind a trusted proxy only). */
  readonly trustProxy?: boolean | undefined
}

const routes = makeRouteTable(SlotwiseApi, [
  { method: "GET", path: OPENAPI_PATH, access: publicAccess },
  { method: "GET", path: DOCS_PATH, access: publicAccess },
  { method: "GET", path: DOCS_SCRIPT_PATH, access: publicAccess }
])

const stripPrefix = (request: HttpServerRequest.HttpServerRequest, prefix: string | undefined) => {
  if (prefix === undefined) return request
  const url = request.url
  return url === prefix || url.startsWith(`${prefix}/`) || url.startsWith(`${prefix}?`)
    ? request.modify({ url: url.slice(prefix.length) || "/" })
    : request
}

/** The router gives up on a path segment over 100 characters (a 404) before it decodes any body. */
const routable = (path: string): boolean => path.length <= 100 || path.split("/").every((segment) => segment.length <= 100)

/**
 * Decodes a write's body with its endpoint's decoder before the route runs: a bad body is
 * refused here with the core's `validation_failed`; a good one is decoded once, and the
 * payload schema takes the decoded value as it is (contract/decodedBodies.ts).
 */
const decodeFirst = <E, R>(decode: BodyDecoder, parsed: unknown, app: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>) =>
  Effect.suspend((): Effect.Effect<HttpServerResponse.HttpServerResponse, E | ValidationFailed, R> => {
    const decoded = decode(parsed)
    if (Either.isLeft(decoded)) return Effect.fail(refusedInput(decoded.left))
    if (typeof parsed === "object" && parsed !== null) rememberDecoded(parsed, decode, decoded.right)
    return app
  })

export const makePipeline = (options: PipelineOptions = {}) =>
  Effect.gen(function*() {
    const accounts = yield* Accounts
    const limiter = yield* RateLimiter
    const gate = yield* Gate
    const idempotent = makeIdempotent(yield* Idempotency)
    const prefix = withoutTrailingSlash(options.prefix ?? "") || undefined
    const trustProxy = options.trustProxy === true
    // Without the core's custom domains (a pipeline over the access services alone), origins are the accounts' lists only.
    const domains = Option.getOrUndefined(yield* Effect.serviceOption(Domains))
    const browserOrigin = makeBrowserOrigin(domains, trustProxy)
    const isCustomDomain = (origin: string) =>
      domains === undefined ? Effect.succeed(false) : Effect.map(domains.tenantForOrigin(origin), Option.isSome)

    return (app: HttpApp.Default): HttpApp.Default =>
      Effect.flatMap(HttpServerRequest.HttpServerRequest, (original) => {
        const method = original.method
        let caller: Caller | undefined
        // The rate-limit (and CORS) headers, once the request is counted. Added to whatever
        // the request answers, set directly rather than as a pre-response handler: that
        // handler is a FiberRef update per request.
        let extraHeaders: Record<string, string> | undefined

        const handled = Effect.gen(function*() {
          // 1. Prefix and preflight.
          const request = stripPrefix(original, prefix)
          const headers = request.headers
          const path = request.url.split("?", 1)[0]!
          const origin = headers.origin
          const address = () => clientAddress(request, trustProxy)
          if (isPreflight(method, headers)) {
            const counted = yield* countRequest(limiter, policyOf(undefined, address))
            extraHeaders = counted.headers
            if (counted.refusal !== undefined) return yield* counted.refusal
            return yield* preflight(accounts, origin, isCustomDomain)
          }

          // 2. The route.
          const route = routes.match(method, path)
          const rule = route._tag === "Found" ? route.access : undefined

          // 3. Who is calling, and whether they may call this.
          const passage = yield* gate.admit(rule, headers.authorization, address, (who) => browserOrigin(who, headers))
          caller = passage.caller
          const { principal, visitor } = passage

          // 4. Count the request; every response from here on carries the figures.
          const counted = yield* countRequest(limiter, policyOf(caller, address, visitor))
          const allowedOrigin = corsOrigin(caller, passage.from.origin, passage.from.domainOwner)
          if (allowedOrigin !== undefined) addCorsHeaders(counted.headers, allowedOrigin)
          extraHeaders = counted.headers
          if (counted.refusal !== undefined) return yield* counted.refusal

          // 5. The gate's verdict, once the request is counted.
          if (route._tag === "MethodNotAllowed") {
            return yield* new MethodNotAllowed({ detail: `${method} is not allowed on ${shownPath(path)}`, allow: route.allow })
          }
          if (passage.verdict._tag === "Hidden") return yield* noRoute(method, path)
          if (passage.verdict._tag === "Denied") return yield* passage.verdict.error

          // 6. The body.
          const body = yield* readBody(request, method, path)
          // The passage goes to the router in its context (the security middleware reads it
          // there), with the request when the body step or the prefix replaced it.
          const routed = route._tag === "Found" && route.payload !== undefined && body.value !== undefined && routable(path)
            ? decodeFirst(route.payload, body.value, app)
            : app
          const run = handOver(routed, passage, body.request === original ? undefined : body.request)

          // 7. Idempotency, 8. the route.
          const idempotencyKey = headers["idempotency-key"]
          if (method === "POST" && principal !== undefined && idempotencyKey !== undefined) {
            return yield* idempotent({ header: idempotencyKey, method, path, body: body.value, principal, visitor }, run)
          }
          return yield* run
        })

        return handled.pipe(
          Effect.catchAllCause((cause) =>
            Effect.flatMap(
              responseOfCause(cause, method, caller !== undefined && presentedCredential(caller)),
              (response) => response === undefined ? Effect.failCause(cause) : Effect.succeed(response)
            )
          ),
          Effect.map((response) => extraHeaders === undefined ? response : HttpServerResponse.setHeaders(response, extraHeaders))
        )
      }) as HttpApp.Default
  })
