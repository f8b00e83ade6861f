/**
 * The security middleware of the groups: bearer API keys for /v1, the operator's token for
 * /admin/v1. The request pipeline (middleware/pipeline.ts) has already authenticated the
 * request, limited its rate and checked its scope, and hands its verdict to the router with
 * the request; these refuse a request that did not come through it, provide the calling
 * credential (`CurrentPrincipal`) and its tenant (`Tenant`) to the handlers, and declare the
 * bearer scheme in the OpenAPI document.
 */
import { type HttpApiEndpoint, type HttpApiGroup, HttpApiMiddleware, HttpApiSecurity } from "@effect/platform"
import { Context } from "effect"
import type { Principal } from "../../../src/keys/ApiKeys.js"
import type { Visitor } from "../../../src/domain/visitor.js"
import { Tenant } from "../../../src/ports/tenant.js"
import { UnauthorizedProblem } from "./problems.js"

/** The credential a request acts as, and the visitor it acts for when it is a publishable key. */
export interface Authenticated {
  readonly principal: Principal
  readonly visitor: Visitor | undefined
}

/** The calling credential, provided to the handlers of the groups behind `Authentication`. */
export class CurrentPrincipal extends Context.Tag("slotwise/http/CurrentPrincipal")<CurrentPrincipal, Authenticated>() {}

export class Authentication extends HttpApiMiddleware.Tag<Authentication>()("Authentication", {
  failure: UnauthorizedProblem,
  provides: CurrentPrincipal,
  security: { bearer: HttpApiSecurity.bearer }
}) {}

/** The calling credential's tenant (account + environment), from `CurrentPrincipal`. */
export class CallerTenant extends HttpApiMiddleware.Tag<CallerTenant>()("CallerTenant", {
  provides: Tenant
}) {}

/**
 * `group` behind an API key or access token: its handlers are given the principal and its
 * tenant. The platform runs a group's middleware last-added first, so `Authentication` runs
 * (and refuses) before `CallerTenant` reads what it provided.
 */
export const authenticated = <Id extends string, Endpoints extends HttpApiEndpoint.HttpApiEndpoint.Any, Error, R, TopLevel extends boolean>(
  group: HttpApiGroup.HttpApiGroup<Id, Endpoints, Error, R, TopLevel>
) => group.middleware(CallerTenant).middleware(Authentication)

export class OperatorAuthentication extends HttpApiMiddleware.Tag<OperatorAuthentication>()("OperatorAuthentication", {
  failure: UnauthorizedProblem,
  security: { operator: HttpApiSecurity.bearer }
}) {}
