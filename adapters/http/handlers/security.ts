/**
 * The groups' security middleware and what the handlers read of the caller: the pipeline's
 * gate has judged the request and handed its passage on with it (middleware/gate.ts). The
 * middleware refuses a request without one; the handlers read the principal from it where
 * they use it, and run the core as its tenant.
 */
import { HttpServerRequest } from "@effect/platform"
import { Context, Effect, FiberRef, Layer } from "effect"
import type { Principal } from "../../../src/keys/ApiKeys.js"
import { Unauthorized } from "../../../src/domain/errors.js"
import type { Visitor } from "../../../src/domain/visitor.js"
import { Tenant } from "../../../src/ports/tenant.js"
import { Authentication, OperatorAuthentication } from "../contract/security.js"
import { withPassage } from "../middleware/gate.js"

const NO_KEY = new Unauthorized({ detail: "no valid API key" })
const NOT_OPERATOR = new Unauthorized({ detail: "operator token required" })

// A request that did not come through the gate has no passage: refused, never anonymous access.
const principal = withPassage((passage) =>
  passage?.principal !== undefined ? Effect.succeed(passage.principal) : Effect.fail(NO_KEY))
const operator = withPassage((passage) =>
  passage?.caller._tag === "Operator" ? Effect.void : Effect.fail(NOT_OPERATOR))

const admitted = withPassage((passage) => passage?.principal !== undefined ? Effect.void : Effect.fail(NO_KEY))

export const AuthenticationLive = Layer.succeed(Authentication, Authentication.of({ bearer: () => admitted }))

export const OperatorAuthenticationLive = Layer.succeed(OperatorAuthentication, OperatorAuthentication.of({ operator: () => operator }))

/**
 * The calling credential. The handlers behind `Authentication` only run once it has found
 * one in the request's passage, so its absence here is a defect, never anonymous access.
 */
export const currentPrincipal: Effect.Effect<Principal, never, HttpServerRequest.HttpServerRequest> = Effect.orDie(principal)

/**
 * Runs what `use` makes of the request's passage as the calling credential's tenant (account +
 * environment), with one read of the passage. The tenant is set in the request fiber's context
 * for the rest of the request (a fiber serves one request, and the caller stays the same), not
 * provided: a provide copies the context and restores it afterwards, uninterruptibly.
 */
const asCaller = <A, E>(
  use: (principal: Principal, visitor: Visitor | undefined) => Effect.Effect<A, E, Tenant>
): Effect.Effect<A, E, HttpServerRequest.HttpServerRequest> =>
  withPassage((passage) =>
    passage?.principal === undefined
      // The handlers only run once `Authentication` found a principal: its absence is a defect.
      ? Effect.die(NO_KEY)
      : Effect.zipRight(
        FiberRef.update(FiberRef.currentContext, Context.add(Tenant, passage.principal.tenant)),
        // Its `Tenant` is the one just set.
        use(passage.principal, passage.visitor) as Effect.Effect<A, E>
      ))

/** Runs what `use` makes of the calling credential as its tenant (account + environment). */
export const asPrincipal = <A, E>(
  use: (principal: Principal) => Effect.Effect<A, E, Tenant>
): Effect.Effect<A, E, HttpServerRequest.HttpServerRequest> => asCaller(use)

/** Runs a core use case as the calling credential's tenant (account + environment). */
export const asTenant = <A, E>(effect: Effect.Effect<A, E, Tenant>): Effect.Effect<A, E, HttpServerRequest.HttpServerRequest> =>
  asCaller(() => effect)

/** As the tenant: `forVisitor` when a publishable key calls (the visitor's view), else `forAccount`. */
export const asAudience = <A, E, B, F>(
  forAccount: Effect.Effect<A, E, Tenant>,
  forVisitor: (visitor: Visitor) => Effect.Effect<B, F, Tenant>
): Effect.Effect<A | B, E | F, HttpServerRequest.HttpServerRequest> =>
  asCaller<A | B, E | F>((_, visitor) => visitor === undefined ? forAccount : forVisitor(visitor))
