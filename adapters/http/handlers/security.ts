/** The groups' security middleware: hands the pipeline's result to the handlers. */
import { Effect, FiberRef, Layer } from "effect"
import { Unauthorized } from "../../../src/domain/errors.js"
import type { Visitor } from "../../../src/domain/visitor.js"
import { Tenant } from "../../../src/ports/tenant.js"
import { Authentication, CurrentPrincipal, OperatorAuthentication } from "../contract/security.js"
import { currentAuth } from "../middleware/state.js"

export const AuthenticationLive = Layer.succeed(
  Authentication,
  Authentication.of({
    bearer: () =>
      Effect.flatMap(FiberRef.get(currentAuth), ({ principal }) =>
        principal !== undefined
          ? Effect.succeed(principal)
          : Effect.fail(new Unauthorized({ detail: "no valid API key" })))
  })
)

export const OperatorAuthenticationLive = Layer.succeed(
  OperatorAuthentication,
  OperatorAuthentication.of({
    operator: () =>
      Effect.flatMap(FiberRef.get(currentAuth), ({ operator }) =>
        operator ? Effect.void : Effect.fail(new Unauthorized({ detail: "operator token required" })))
  })
)

/** The visitor a publishable key acts for (its key and client address); undefined for other credentials. */
export const currentVisitor = Effect.map(FiberRef.get(currentAuth), (auth) => auth.visitor)

/** Runs a core use case as the calling credential's tenant (account + environment). */
export const asTenant = <A, E>(effect: Effect.Effect<A, E, Tenant>): Effect.Effect<A, E, CurrentPrincipal> =>
  Effect.flatMap(CurrentPrincipal, (principal) => Effect.provideService(effect, Tenant, principal.tenant))

/** As the tenant: `forVisitor` when a publishable key calls (the visitor's view), else `forAccount`. */
export const asAudience = <A, E, B, F>(
  forAccount: Effect.Effect<A, E, Tenant>,
  forVisitor: (visitor: Visitor) => Effect.Effect<B, F, Tenant>
): Effect.Effect<A | B, E | F, CurrentPrincipal> =>
  Effect.flatMap(currentVisitor, (visitor) => asTenant<A | B, E | F>(visitor === undefined ? forAccount : forVisitor(visitor)))
