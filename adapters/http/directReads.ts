/**
 * The direct read lane: `GET /v1/<resource>/<id>` of the core resources, run as one fiber
 * straight on node:http instead of through the platform's HttpApi server. Reading one
 * resource is what integrations do most, and for it the platform's per-request machinery
 * (request and router contexts, group middleware, response conversion) costs more than
 * Slotwise's own work; bench/http-ceiling.ts shows both paths.
 *
 * The lane takes only the plain case: a GET with no query and no `Origin`, an id the router
 * would match, and a credential that authenticates and may read the resource. It runs the
 * pipeline's own steps (the same gate, count, read, encode with the endpoint's
 * success schema, render a failure with the same problem renderer), so an answer is the same
 * by either path. Anything else passes to the full pipeline before it is counted (so it is
 * counted once, there): no or a refused credential, a denied scope, a publishable key (its
 * answers are the public views, and it is counted per client address), a preflight, a mount
 * prefix.
 */
import { HttpApi, type HttpServerResponse } from "@effect/platform"
import { Context, Effect, type Either, FiberRef, type ParseResult, Runtime, RuntimeFlags, Schema } from "effect"
import type * as http from "node:http"
import { Authenticator } from "../../src/auth/Authenticator.js"
import type { SlotwiseFailure } from "../../src/domain/errors.js"
import { Tenant, type TenantId } from "../../src/ports/tenant.js"
import { RateLimiter } from "../../src/ratelimit/RateLimiter.js"
import { accessOf, type AccessRule } from "./contract/access.js"
import { makeGate, noOrigin } from "./middleware/gate.js"
import { responseOfCause } from "./middleware/problem.js"
import { countRequest, policyOf } from "./middleware/ratelimit.js"

/** One endpoint of the lane: which HttpApi endpoint it answers, and the core call that reads. */
export interface DirectRead {
  readonly group: string
  readonly endpoint: string
  readonly schema: Schema.Schema<any, any>
  readonly read: (id: string) => Effect.Effect<unknown, SlotwiseFailure, Tenant>
}

/** A direct read of `group`'s `endpoint`, whose success schema is `schema`. */
export const directRead = <A, I>(
  group: string,
  endpoint: string,
  schema: Schema.Schema<A, I>,
  read: (id: string) => Effect.Effect<A, SlotwiseFailure, Tenant>
): DirectRead => ({ group, endpoint, schema, read })

interface Lane {
  readonly access: AccessRule
  readonly read: DirectRead["read"]
  readonly encode: (value: unknown) => Either.Either<unknown, ParseResult.ParseError>
}

/** Only authenticated callers take the lane: their requests are counted by credential, not address. */
const noAddress = () => ""

/** The router gives up on longer path parameters; the full pipeline answers those. */
const MAX_ID_LENGTH = 100

const writeResponse = (res: http.ServerResponse, response: HttpServerResponse.HttpServerResponse, extra: Record<string, string>) => {
  const body = response.body
  if (body._tag !== "Uint8Array") {
    // Every answer of the lane is JSON; anything else is a bug, not a client's mistake.
    res.writeHead(500).end()
    return
  }
  res.writeHead(response.status, {
    "content-type": body.contentType,
    "content-length": body.body.byteLength,
    ...response.headers,
    ...extra
  })
  res.end(body.body)
}

/**
 * `read` with `tenant` as its `Tenant`, set in its fiber's context for the rest of the
 * request: providing it around the read would also restore the context afterwards, in an
 * uninterruptible region, which cost a lane's read as much as its access decision and count
 * together. Nothing runs in a lane's fiber after the read but the answer, and the fiber's
 * context held nothing before (see `runFork` below).
 */
const asTenant = <A, E>(read: Effect.Effect<A, E, Tenant>, tenant: TenantId): Effect.Effect<A, E> =>
  Effect.zipRight(FiberRef.set(FiberRef.currentContext, Context.make(Tenant, tenant)), read as Effect.Effect<A, E>)

/**
 * The lane for `reads` over `api`: a Node listener step `(req, res, next)` that answers the
 * request, or calls `next` and leaves it untouched for the full pipeline.
 */
export const makeDirectReadLane = (api: HttpApi.HttpApi.Any, reads: ReadonlyArray<DirectRead>) =>
  Effect.gen(function*() {
    const gate = makeGate(yield* Authenticator, undefined)
    const limiter = yield* RateLimiter
    // The lane's fibers need nothing from the context but what they are given (a read needs
    // only its `Tenant`, by its type): an empty context keeps providing the tenant a copy of
    // one entry, not of every service of the server. Clock, logger and the rest are the
    // server's, carried by its fiber refs.
    const server = yield* Effect.runtime<never>()
    // Without runtime metrics: nothing reads Effect's fiber counters, and keeping them costs
    // five metric updates per request.
    const runtimeFlags = RuntimeFlags.disable(server.runtimeFlags, RuntimeFlags.RuntimeMetrics)
    const runFork = Runtime.runFork(Runtime.make({ context: Context.empty(), fiberRefs: server.fiberRefs, runtimeFlags }))

    // By the collection's path (`/v1/bookings/`): the endpoint's access rule and success schema.
    const lanes = new Map<string, Lane>()
    // Paths of their own (`/v1/availability/slots`): the router prefers them to a read's `:id`.
    const ownPaths = new Set<string>()
    HttpApi.reflect(api as any, {
      onGroup: () => {},
      onEndpoint: ({ endpoint, group, mergedAnnotations }) => {
        if (!endpoint.path.includes(":")) ownPaths.add(endpoint.path)
        const read = reads.find((r) => r.group === group.identifier && r.endpoint === endpoint.name)
        if (read === undefined) return
        const collection = /^(\/v1\/[a-z-]+\/):id$/.exec(endpoint.path)?.[1]
        if (endpoint.method !== "GET" || collection === undefined || endpoint.successSchema !== read.schema) {
          throw new Error(`direct read ${group.identifier}.${endpoint.name} does not match its endpoint`)
        }
        lanes.set(collection, {
          access: accessOf(mergedAnnotations),
          read: read.read,
          encode: Schema.encodeUnknownEither(read.schema)
        })
      }
    })
    if (lanes.size !== reads.length) throw new Error("a direct read names no endpoint of the API")

    const reply = (res: http.ServerResponse, headers: Record<string, string>) =>
      Effect.matchCauseEffect({
        onSuccess: (value: unknown) =>
          Effect.sync(() => {
            const body = JSON.stringify(value)
            res.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(body), ...headers })
            res.end(body)
          }),
        onFailure: (cause) =>
          Effect.map(responseOfCause(cause, "GET", true), (response) => {
            if (response !== undefined) writeResponse(res, response, headers)
          })
      })

    // Plain combinators, not a generator: this runs on every read.
    const serve = (lane: Lane, id: string, authorization: string, res: http.ServerResponse, next: () => void) =>
      Effect.matchCauseEffect(gate(lane.access, authorization, noAddress, noOrigin), {
        // A storage fault while authenticating: the full pipeline answers it (nothing was counted).
        onFailure: () => Effect.sync(next),
        onSuccess: ({ caller, principal, verdict, visitor }) =>
          principal === undefined || visitor !== undefined || verdict._tag !== "Allowed"
            ? Effect.sync(next)
            : Effect.flatMap(countRequest(limiter, policyOf(caller, noAddress)), (counted) =>
              reply(res, counted.headers)(
                counted.refusal !== undefined
                  ? Effect.fail(counted.refusal)
                  : Effect.flatMap(asTenant(lane.read(id), principal.tenant), lane.encode)
              ))
      })

    return (req: http.IncomingMessage, res: http.ServerResponse, next: () => void): void => {
      const url = req.url ?? "/"
      const slash = url.lastIndexOf("/")
      const lane = req.method === "GET" ? lanes.get(url.slice(0, slash + 1)) : undefined
      const id = url.slice(slash + 1)
      if (
        lane === undefined || id.length === 0 || id.length > MAX_ID_LENGTH || url.includes("?") || id.includes("%") ||
        ownPaths.has(url) || req.headers.origin !== undefined || req.headers.authorization === undefined
      ) return next()

      runFork(serve(lane, id, req.headers.authorization, res, next))
    }
  })
