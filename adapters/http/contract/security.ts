/**
 * The security middleware of the groups: bearer API keys for /v1, the operator's token for
 * /admin/v1. The request pipeline (middleware/pipeline.ts) has already authenticated the
 * request, limited its rate and checked its scope; these refuse a request that did not come
 * through it and declare the bearer scheme in the OpenAPI document. They provide nothing:
 * the handlers read the principal from the request's passage (handlers/security.ts), which
 * costs no copy of the request's context.
 */
import { HttpApiMiddleware, HttpApiSecurity } from "@effect/platform"
import { UnauthorizedProblem } from "./problems.js"

export class Authentication extends HttpApiMiddleware.Tag<Authentication>()("Authentication", {
  failure: UnauthorizedProblem,
  security: { bearer: HttpApiSecurity.bearer }
}) {}

export class OperatorAuthentication extends HttpApiMiddleware.Tag<OperatorAuthentication>()("OperatorAuthentication", {
  failure: UnauthorizedProblem,
  security: { operator: HttpApiSecurity.bearer }
}) {}
