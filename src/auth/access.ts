/**
 * The access decision (docs/api.md §2), as one pure function: given what an endpoint requires,
 * who is calling (as authentication resolved it) and the request's `Origin`, allow it, hide
 * it (the operator API does not exist for anyone else), or deny it with the 401/403 to
 * answer. Adapters only call it; the rules live here.
 */
import type { Principal } from "../keys/ApiKeys.js"
import type { Scope } from "../keys/apiKey.js"
import { Forbidden, Unauthorized } from "../domain/errors.js"
import type { TenantId } from "../ports/tenant.js"
import { type Visitor, visitorAddress } from "../domain/visitor.js"
import { howToAllowOrigin } from "./allowOrigin.js"

/** What an endpoint requires: nothing, the operator's token, or an API key (with scopes). */
export type AccessRequirement =
  | { readonly auth: "none" }
  | { readonly auth: "admin" }
  | {
    readonly auth: "key"
    /** Every one of these scopes; absent = any secret key of the account. */
    readonly scope?: Scope | ReadonlyArray<Scope> | undefined
    /** Publishable keys may call it (from the account's allowed origins). */
    readonly publishable: boolean
  }

/** Who is calling, as authentication resolved the `Authorization` header. */
export type Caller =
  /** No `Authorization` header. */
  | { readonly _tag: "Anonymous" }
  /**
   * `Authorization` names another scheme (`Basic …`), or a bearer with no token; `scheme` is
   * "" when the header names no scheme at all (a credential without `Bearer `).
   */
  | { readonly _tag: "Malformed"; readonly scheme: string }
  /** A bearer that names no valid credential (unknown, revoked, expired, not a key). */
  | { readonly _tag: "Rejected"; readonly error: Unauthorized }
  /** The operator's token, on an operator route. */
  | { readonly _tag: "Operator" }
  | { readonly _tag: "Authenticated"; readonly principal: Principal }

export type AccessDecision =
  | { readonly _tag: "Allowed" }
  /** Answer as if the route did not exist (404). */
  | { readonly _tag: "Hidden" }
  | { readonly _tag: "Denied"; readonly error: Unauthorized | Forbidden }

const ALLOWED: AccessDecision = { _tag: "Allowed" }
const HIDDEN: AccessDecision = { _tag: "Hidden" }
const NO_SCOPES: ReadonlyArray<Scope> = []

/** The scopes a requirement asks for (all of them). */
export const requiredScopes = (rule: AccessRequirement): ReadonlyArray<Scope> =>
  rule.auth !== "key" || rule.scope === undefined ? NO_SCOPES : typeof rule.scope === "string" ? [rule.scope] : rule.scope

/**
 * The origin to allow in CORS headers: the request's `Origin` when a publishable key's
 * account lists it exactly, or when it is a verified custom domain of the key's own tenant
 * (`domainOwner`: the tenant whose domain the origin is). Secret keys never get CORS headers
 * (they must not be in browsers).
 */
export const corsOrigin = (caller: Caller, origin: string | undefined, domainOwner?: TenantId): string | undefined =>
  origin !== undefined && caller._tag === "Authenticated" && caller.principal.key.type === "publishable" &&
    (caller.principal.account.allowed_origins.includes(origin) ||
      (domainOwner !== undefined && domainOwner.account_id === caller.principal.tenant.account_id &&
        domainOwner.environment === caller.principal.tenant.environment))
    ? origin
    : undefined

/** Why a request without a usable credential is refused (401), in words that say what to send. */
export const unauthenticated = (caller: Exclude<Caller, { _tag: "Authenticated" }>): Unauthorized => {
  switch (caller._tag) {
    case "Rejected":
      return caller.error
    case "Malformed":
      return new Unauthorized({
        detail: caller.scheme.toLowerCase() === "bearer"
          ? "empty bearer credential: send Authorization: Bearer <API key>"
          : caller.scheme === ""
          ? "the Authorization header names no scheme: send Authorization: Bearer <API key>"
          : `the ${caller.scheme} authorization scheme is not accepted: send Authorization: Bearer <API key>`
      })
    case "Anonymous":
    case "Operator":
      return new Unauthorized({ detail: "no credential: send Authorization: Bearer <API key>" })
  }
}

/**
 * The visitor a principal acts for (domain/visitor.ts): a publishable key's caller, at its
 * client address (an IPv6 one by its /64). Secret keys and OAuth tokens act for the account: none.
 */
export const visitorOf = (principal: Principal, address: () => string): Visitor | undefined =>
  principal.key.type === "publishable" ? { key_id: principal.key.id, address: visitorAddress(address()) } : undefined

/**
 * Why a publishable key is refused on an endpoint, from that endpoint's own rule: which
 * endpoints are open to publishable keys is the endpoints' annotations' business, never a list here.
 */
const secretOnly = (rule: AccessRequirement): string => {
  const scopes = requiredScopes(rule)
  return `publishable keys may only call the widget's endpoints; this one takes a secret key${
    scopes.length === 0 ? "" : ` with the scope${scopes.length > 1 ? "s" : ""} ${scopes.join(", ")}`
  }`
}

/** May `caller` call an endpoint that requires `rule`, from `origin` (a custom domain of `domainOwner`)? */
export const decideAccess = (
  rule: AccessRequirement,
  caller: Caller,
  origin: string | undefined,
  domainOwner?: TenantId
): AccessDecision => {
  switch (rule.auth) {
    case "none":
      return ALLOWED
    case "admin":
      return caller._tag === "Operator" ? ALLOWED : HIDDEN
    case "key": {
      if (caller._tag !== "Authenticated") return { _tag: "Denied", error: unauthenticated(caller) }
      const key = caller.principal.key
      if (key.type === "publishable") {
        if (!rule.publishable) {
          return { _tag: "Denied", error: new Forbidden({ detail: secretOnly(rule) }) }
        }
        if (corsOrigin(caller, origin, domainOwner) === undefined) {
          return {
            _tag: "Denied",
            error: new Forbidden({
              detail: origin === undefined
                ? "publishable keys work only from the account's allowed origins, and this request has no Origin header"
                : `publishable keys work only from the account's allowed origins, and ${origin} is not one of them: ${
                  howToAllowOrigin(origin, caller.principal.tenant.account_id)
                }`
            })
          }
        }
      }
      const required = requiredScopes(rule)
      let missing: Array<Scope> | undefined
      for (const scope of required) if (!key.scopes.includes(scope)) (missing ??= []).push(scope)
      if (missing === undefined) return ALLOWED
      return {
        _tag: "Denied",
        error: new Forbidden({ detail: `this credential lacks the scope${missing.length > 1 ? "s" : ""} ${missing.join(", ")}` })
      }
    }
  }
}
