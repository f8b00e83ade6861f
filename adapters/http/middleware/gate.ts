/**
 * The gate every way into the API admits a request through (the pipeline behind the server,
 * the mounted Node and Fetch handlers, and the direct read lane): the endpoint's rule, the
 * `Authorization` header and the client address become who is calling (the principal, and
 * the visitor a publishable key acts for) and the verdict on the call: allowed, hidden (404)
 * or denied with its 401/403. The gate answers nothing itself: the caller counts the request
 * first, so a refusal carries the rate-limit figures and a spent quota is a 429 before any
 * 401/403.
 *
 * The pipeline hands its passage to the router in the request's context (`handOver`): the
 * groups' security middleware reads it there (`admitted`) and provides the principal and its
 * tenant to the handlers (handlers/security.ts).
 */
import { HttpServerRequest } from "@effect/platform"
import { Context, Effect } from "effect"
import type { Principal } from "../../../src/keys/ApiKeys.js"
import { type AccessDecision, type Caller, decideAccess, visitorOf } from "../../../src/auth/access.js"
import { Authenticator, type AuthenticatorService } from "../../../src/auth/Authenticator.js"
import type { StorageFailure } from "../../../src/domain/errors.js"
import type { Visitor } from "../../../src/domain/visitor.js"
import type { AccessRule } from "../contract/access.js"
import type { BrowserOrigin } from "../hostRouting.js"
import { makeAuthenticate } from "./authenticate.js"

export interface Passage {
  readonly caller: Caller
  readonly principal: Principal | undefined
  /** The visitor a publishable key acts for; undefined for other credentials. */
  readonly visitor: Visitor | undefined
  /** The client address the request is counted under (X-Forwarded-For only behind a trusted proxy). */
  readonly address: () => string
  /** The request's origin as the origin checks see it (a custom domain's, or a hosted page's). */
  readonly from: BrowserOrigin
  /** Allowed, hidden (no route, or an operator route for anyone else) or denied with its 401/403. */
  readonly verdict: AccessDecision
}

/** Where a request comes from, looked up once its caller is known (only publishable keys need a lookup). */
export type OriginOf = (caller: Caller) => Effect.Effect<BrowserOrigin, StorageFailure>

const HIDDEN: AccessDecision = { _tag: "Hidden" }
const NO_ORIGIN: BrowserOrigin = { origin: undefined, domainOwner: undefined }

/** No `Origin` at all: the direct read lane takes only requests without one. */
export const noOrigin: OriginOf = () => Effect.succeed(NO_ORIGIN)

/**
 * The gate: `rule` is the endpoint's access rule, undefined when no route matched (hidden,
 * whoever calls). Fails only with a storage fault while looking a credential or origin up.
 */
export const makeGate = (authenticator: AuthenticatorService, adminToken: string | undefined) => {
  const authenticate = makeAuthenticate(authenticator, adminToken)
  const passageOf = (rule: AccessRule | undefined, caller: Caller, address: () => string, from: BrowserOrigin): Passage => {
    const principal = caller._tag === "Authenticated" ? caller.principal : undefined
    return {
      caller,
      principal,
      visitor: principal === undefined ? undefined : visitorOf(principal, address),
      address,
      from,
      verdict: rule === undefined ? HIDDEN : decideAccess(rule, caller, from.origin, from.domainOwner)
    }
  }
  return (
    rule: AccessRule | undefined,
    authorization: string | undefined,
    address: () => string,
    originOf: OriginOf
  ): Effect.Effect<Passage, StorageFailure> =>
    Effect.flatMap(
      authenticate(authorization, rule),
      (caller) => Effect.map(originOf(caller), (from) => passageOf(rule, caller, address, from))
    )
}

/**
 * The gate as a service: `admit` judges a request. Built with the operator's bearer token
 * (none or empty: the operator routes are hidden from everyone).
 */
export class Gate extends Effect.Service<Gate>()("slotwise/http/Gate", {
  effect: (adminToken: string | undefined) =>
    Effect.map(Authenticator, (authenticator) => ({
      admit: makeGate(authenticator, adminToken !== undefined && adminToken.length > 0 ? adminToken : undefined)
    }))
}) {}

/** The passage of the request being served, as the pipeline hands it to the router. */
class RequestPassage extends Context.Tag("slotwise/http/RequestPassage")<RequestPassage, Passage>() {}

/**
 * Runs `app` (the router) with `passage` in its context, and with `request` in place of the
 * one being served when the body step or the prefix replaced it: one copy of the context for both.
 */
export const handOver = <A, E, R>(
  app: Effect.Effect<A, E, R>,
  passage: Passage,
  request: HttpServerRequest.HttpServerRequest | undefined
): Effect.Effect<A, E, R> =>
  Effect.mapInputContext(app, (context: Context.Context<R>) => {
    const services = new Map(context.unsafeMap)
    services.set(RequestPassage.key, passage)
    if (request !== undefined) services.set(HttpServerRequest.HttpServerRequest.key, request)
    return Context.unsafeMake<R>(services)
  })

/** The passage the pipeline handed over with the request being served; undefined when it did not come through the gate. */
export const admitted: Effect.Effect<Passage | undefined> = Effect.contextWith((context: Context.Context<never>) =>
  context.unsafeMap.get(RequestPassage.key) as Passage | undefined
)
