/** The groups' security middleware: hands the pipeline's result to the handlers. */
import { Effect, FiberRef, Layer } from "effect"
import { Unauthorized } from "../../../src/domain/errors.js"
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

/** Runs a core use case as the calling credential's tenant (account + environment). */
export const asTenant = <A, E>(effect: Effect.Effect<A, E, Tenant>): Effect.Effect<A, E, CurrentPrincipal> =>
  Effect.flatMap(CurrentPrincipal, (principal) => Effect.provideService(effect, Tenant, principal.tenant))
