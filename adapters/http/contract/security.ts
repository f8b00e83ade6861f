/**
 * The security middleware of the groups: bearer API keys for /v1, the operator's token for
 * /admin/v1. The request pipeline (middleware/pipeline.ts) has already authenticated the
 * request, limited its rate and checked its scope; these hand the result to the handlers
 * and declare the bearer scheme in the OpenAPI document.
 */
import { HttpApiMiddleware, HttpApiSecurity } from "@effect/platform"
import { Context } from "effect"
import type { Principal } from "../../../src/ApiKeys.js"
import { UnauthorizedProblem } from "./problems.js"

export class CurrentPrincipal extends Context.Tag("slotwise/http/CurrentPrincipal")<CurrentPrincipal, Principal>() {}

export class Authentication extends HttpApiMiddleware.Tag<Authentication>()("Authentication", {
  failure: UnauthorizedProblem,
  provides: CurrentPrincipal,
  security: { bearer: HttpApiSecurity.bearer }
}) {}

export class OperatorAuthentication extends HttpApiMiddleware.Tag<OperatorAuthentication>()("OperatorAuthentication", {
  failure: UnauthorizedProblem,
  security: { operator: HttpApiSecurity.bearer }
}) {}
