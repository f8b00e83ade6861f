/**
 * The groups' security middleware: the pipeline's gate has judged the request and handed its
 * passage to the router in the request's context (middleware/gate.ts). `Authentication`
 * refuses a request without a principal there and provides it (`CurrentPrincipal`),
 * `CallerTenant` its tenant: the handlers read both as services.
 *
 * The bearer token the platform decodes for `Authentication` is the one the gate has already
 * authenticated for this request; it is not authenticated again (the pipeline needs the
 * caller before it counts the request, and the verdict before it reads the body).
 */
import { Effect, Layer } from "effect"
import type { Principal } from "../../../src/keys/ApiKeys.js"
import { Unauthorized } from "../../../src/domain/errors.js"
import type { Visitor } from "../../../src/domain/visitor.js"
import type { Tenant } from "../../../src/ports/tenant.js"
import { type Authenticated, Authentication, CallerTenant, CurrentPrincipal, OperatorAuthentication } from "../contract/security.js"
import { admitted } from "../middleware/gate.js"

const NO_KEY = new Unauthorized({ detail: "no valid API key" })
const NOT_OPERATOR = new Unauthorized({ detail: "operator token required" })

// A request that did not come through the gate has no passage: refused, never anonymous access.
const principal = Effect.flatMap(admitted, (passage) =>
  passage?.principal !== undefined
    ? Effect.succeed<Authenticated>({ principal: passage.principal, visitor: passage.visitor })
    : Effect.fail(NO_KEY))
const operator = Effect.flatMap(admitted, (passage) => passage?.caller._tag === "Operator" ? Effect.void : Effect.fail(NOT_OPERATOR))

// `CallerTenant` runs inside `Authentication` (contract/security.ts, `authenticated`): the principal is there.
const tenant = Effect.map(Effect.serviceOption(CurrentPrincipal), (current) => {
  if (current._tag === "None") throw new Error("CallerTenant runs only behind Authentication")
  return current.value.principal.tenant
})

export const AuthenticationLive = Layer.succeed(Authentication, Authentication.of({ bearer: () => principal }))

export const CallerTenantLive = Layer.succeed(CallerTenant, CallerTenant.of(tenant))

export const OperatorAuthenticationLive = Layer.succeed(OperatorAuthentication, OperatorAuthentication.of({ operator: () => operator }))

/** Runs what `use` makes of the calling credential. */
export const asPrincipal = <A, E>(
  use: (principal: Principal) => Effect.Effect<A, E, Tenant>
): Effect.Effect<A, E, Tenant | CurrentPrincipal> => Effect.flatMap(CurrentPrincipal, (current) => use(current.principal))

/** `forVisitor` when a publishable key calls (the visitor's view), else `forAccount`. */
export const asAudience = <A, E, B, F>(
  forAccount: Effect.Effect<A, E, Tenant>,
  forVisitor: (visitor: Visitor) => Effect.Effect<B, F, Tenant>
): Effect.Effect<A | B, E | F, Tenant | CurrentPrincipal> =>
  Effect.flatMap(
    CurrentPrincipal,
    ({ visitor }): Effect.Effect<A | B, E | F, Tenant> => visitor === undefined ? forAccount : forVisitor(visitor)
  )
