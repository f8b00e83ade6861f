/**
 * Who may call an endpoint, written next to the endpoint as an annotation: no credential,
 * the operator's token, or an API key with a scope (and whether publishable keys may call
 * it). The request pipeline enforces it before the handler runs; the OpenAPI document shows it.
 */
import { HttpApi, OpenApi } from "@effect/platform"
import { Context, Option, type SchemaAST } from "effect"
import { type AccessRequirement, requiredScopes } from "../../../src/auth/access.js"
import type { Scope } from "../../../src/keys/apiKey.js"

/** The rule itself and its decision live in the core (src/auth/access.ts). */
export type AccessRule = AccessRequirement

export class Access extends Context.Tag("slotwise/http/Access")<Access, AccessRule>() {}

const describe = (rule: AccessRule): string => {
  switch (rule.auth) {
    case "none":
      return "No credential needed."
    case "admin":
      return "Operator API: bearer is the server's admin token."
    case "key":
      return [
        rule.scope === undefined
          ? "Any secret key of the account."
          : typeof rule.scope === "string"
          ? `Scope \`${rule.scope}\`.`
          : `Scopes ${rule.scope.map((s) => `\`${s}\``).join(", ")} (all of them).`,
        rule.publishable ? "Publishable keys allowed (from the account's allowed origins)." : "Secret keys only."
      ].join(" ")
  }
}

export { requiredScopes }

/** The annotations of an endpoint: its summary, its access rule, and that rule in words. */
export const doc = (summary: string, rule: AccessRule): Context.Context<never> =>
  Context.make(Access, rule).pipe(
    Context.add(OpenApi.Summary, summary),
    Context.add(OpenApi.Description, describe(rule))
  ) as Context.Context<never>

export const key = (scope?: Scope | ReadonlyArray<Scope>, options: { readonly publishable?: boolean } = {}): AccessRule => ({
  auth: "key",
  scope,
  publishable: options.publishable ?? false
})
export const publicAccess: AccessRule = { auth: "none" }
export const adminAccess: AccessRule = { auth: "admin" }

/** An endpoint's access rule, from its (merged) annotations; an endpoint without one is public. */
export const accessOf = (annotations: Context.Context<never>): AccessRule => Context.getOrElse(annotations, Access, () => publicAccess)

/** One endpoint of an API with the access rule its annotations give it. */
export interface EndpointAccess {
  readonly method: string
  readonly path: string
  readonly access: AccessRule
  /** The payload schema's AST, for endpoints that take a body. */
  readonly payload: SchemaAST.AST | undefined
}

/** Every endpoint of `api` with its access rule, read from the annotations (never listed by hand). */
export const endpointAccess = (api: HttpApi.HttpApi.Any): ReadonlyArray<EndpointAccess> => {
  const endpoints: Array<EndpointAccess> = []
  HttpApi.reflect(api as any, {
    onGroup: () => {},
    onEndpoint: ({ endpoint, mergedAnnotations }) => {
      endpoints.push({
        method: endpoint.method,
        path: endpoint.path,
        access: accessOf(mergedAnnotations),
        payload: Option.getOrUndefined(Option.map(endpoint.payloadSchema, (schema) => schema.ast))
      })
    }
  })
  return endpoints
}

/** The endpoints a publishable key may call (`GET /v1/services`), derived from the annotations. */
export const publishableEndpoints = (api: HttpApi.HttpApi.Any): ReadonlyArray<string> =>
  endpointAccess(api)
    .filter(({ access }) => access.auth === "key" && access.publishable)
    .map(({ method, path }) => `${method} ${path}`)
