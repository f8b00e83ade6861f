/**
 * The groups' security middleware and what the handlers read of the caller: the pipeline's
 * gate has judged the request and handed its passage on with it (middleware/gate.ts). The
 * middleware refuses a request without one; the handlers read the principal from it where
 * they use it, and run the core as its tenant with one provide: each provide copies the
 * request's context and restores it afterwards.
 */
import { HttpServerRequest } from "@effect/platform"
import { Effect, Layer } from "effect"
import type { Principal } from "../../../src/ApiKeys.js"
import { Unauthorized } from "../../../src/domain/errors.js"
import type { Visitor } from "../../../src/domain/visitor.js"
import { Tenant } from "../../../src/ports/tenant.js"
import { Authentication, OperatorAuthentication } from "../contract/security.js"
import { passageOf } from "../middleware/gate.js"

const NO_KEY = new Unauthorized({ detail: "no valid API key" })
const NOT_OPERATOR = new Unauthorized({ detail: "operator token required" })

// A request that did not come through the gate has no passage: refused, never anonymous access.
const principal = Effect.flatMap(passageOf, (passage) =>
  passage?.principal !== undefined ? Effect.succeed(passage.principal) : Effect.fail(NO_KEY))
const operator = Effect.flatMap(passageOf, (passage) =>
  passage?.caller._tag === "Operator" ? Effect.void : Effect.fail(NOT_OPERATOR))

const admitted = Effect.asVoid(principal)

export const AuthenticationLive = Layer.succeed(Authentication, Authentication.of({ bearer: () => admitted }))

export const OperatorAuthenticationLive = Layer.succeed(OperatorAuthentication, OperatorAuthentication.of({ operator: () => operator }))

/** The visitor a publishable key acts for (its key and client address); undefined for other credentials. */
export const currentVisitor: Effect.Effect<Visitor | undefined, never, HttpServerRequest.HttpServerRequest> = Effect.map(
  passageOf,
  (passage) => passage?.visitor
)

/**
 * The calling credential. The handlers behind `Authentication` only run once it has found
 * one in the request's passage, so its absence here is a defect, never anonymous access.
 */
export const currentPrincipal: Effect.Effect<Principal, never, HttpServerRequest.HttpServerRequest> = Effect.orDie(principal)

/** Runs what `use` makes of the calling credential as its tenant (account + environment). */
export const asPrincipal = <A, E>(
  use: (principal: Principal) => Effect.Effect<A, E, Tenant>
): Effect.Effect<A, E, HttpServerRequest.HttpServerRequest> =>
  Effect.flatMap(currentPrincipal, (principal) => Effect.provideService(use(principal), Tenant, principal.tenant))

/** Runs a core use case as the calling credential's tenant (account + environment). */
export const asTenant = <A, E>(effect: Effect.Effect<A, E, Tenant>): Effect.Effect<A, E, HttpServerRequest.HttpServerRequest> =>
  asPrincipal(() => effect)

/** As the tenant: `forVisitor` when a publishable key calls (the visitor's view), else `forAccount`. */
export const asAudience = <A, E, B, F>(
  forAccount: Effect.Effect<A, E, Tenant>,
  forVisitor: (visitor: Visitor) => Effect.Effect<B, F, Tenant>
): Effect.Effect<A | B, E | F, HttpServerRequest.HttpServerRequest> =>
  Effect.flatMap(currentVisitor, (visitor) => asTenant<A | B, E | F>(visitor === undefined ? forAccount : forVisitor(visitor)))
