/**
 * Who may call an endpoint, written next to the endpoint as an annotation: no credential,
 * the operator's token, or an API key with a scope (and whether publishable keys may call
 * it). The request pipeline enforces it before the handler runs; the OpenAPI document shows it.
 */
import { OpenApi } from "@effect/platform"
import { Context } from "effect"
import type { Scope } from "../../../src/domain/apiKey.js"

export type AccessRule =
  | { readonly auth: "none" }
  | { readonly auth: "admin" }
  | {
    readonly auth: "key"
    /** Required scope (every one, when several); absent = any secret key of the account. */
    readonly scope?: Scope | ReadonlyArray<Scope> | undefined
    /** Publishable keys may call it (from the account's allowed origins). */
    readonly publishable: boolean
  }

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

/** The scopes a rule requires (all of them). */
export const requiredScopes = (rule: AccessRule): ReadonlyArray<Scope> =>
  rule.auth !== "key" || rule.scope === undefined ? [] : typeof rule.scope === "string" ? [rule.scope] : rule.scope

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
