/**
 * The rate-limit policy (docs/api.md §1), pure: which limit applies to a request, how a fixed
 * one-minute window counts, and the figures every response reports. Windows start with a
 * key's first request and last 60 s; when one ends the quota is full again.
 */
import { type Account, PLAN_RATE_LIMITS, requestsPerMinute } from "../domain/account.js"
import type { Visitor } from "../domain/visitor.js"

export const WINDOW_SECONDS = 60
export const WINDOW_MS = WINDOW_SECONDS * 1000
/** Requests without a valid credential, per client IP (slows key guessing). */
export const ANONYMOUS_LIMIT = 60

export { PLAN_RATE_LIMITS }

/** A named limit: who is counted (`key`) and how many requests a window admits. */
export interface Policy {
  /** The counter: one per credential, or per client IP without one. */
  readonly key: string
  /** Reported in `RateLimit-Policy` / `RateLimit`: the plan, `custom`, or `anonymous`. */
  readonly name: string
  readonly limit: number
  /** The window's length (default 60 s: the per-minute limits of docs/api.md §1). */
  readonly window_seconds?: number
}

/** The policy of a request made with a key of `account` (key id: rotation keeps the counter). */
type AccountLimits = Pick<Account, "plan" | "rate_limit_per_minute">

/** The account's limit, named by its plan or `custom` when set per account. */
const accountPolicy = (key: string, account: AccountLimits): Policy => ({
  key,
  name: account.rate_limit_per_minute === null ? account.plan : "custom",
  limit: requestsPerMinute(account)
})

export const policyForKey = (account: AccountLimits, keyId: string): Policy => accountPolicy(`key:${keyId}`, account)

/**
 * The policy of a request made with a publishable key: the account's limit for each client
 * address, in a counter of its own, so a visitor who spends it locks out only itself. No
 * key-wide counter applies on top: one would be exactly the quota a single client could
 * spend for every visitor of the page.
 */
export const policyForVisitor = (account: AccountLimits, visitor: Visitor): Policy =>
  accountPolicy(`visitor:${visitor.key_id}:${visitor.address}`, account)

export const policyForAddress = (address: string): Policy => ({
  key: `ip:${address}`,
  name: "anonymous",
  limit: ANONYMOUS_LIMIT
})

/** A window's state after counting a request, as a store returns it. */
export interface WindowCount {
  /** Requests counted in the window, this one included. */
  readonly count: number
  /** When the window ends (epoch ms). */
  readonly reset_ms: number
}

export interface Decision {
  readonly allowed: boolean
  readonly policy: string
  readonly limit: number
  readonly remaining: number
  /** Whole seconds until the quota is full again (at least 1 while a window is open). */
  readonly reset_seconds: number
}

export const decide = (policy: Policy, window: WindowCount, now: number): Decision => ({
  allowed: window.count <= policy.limit,
  policy: policy.name,
  limit: policy.limit,
  remaining: Math.max(0, policy.limit - window.count),
  reset_seconds: Math.max(1, Math.ceil((window.reset_ms - now) / 1000))
})

/** The response fields of a decision: the X- trio, the IETF draft's two, and Retry-After on 429. */
export const headersOf = (d: Decision): Record<string, string> => {
  const headers: Record<string, string> = {
    "x-ratelimit-limit": String(d.limit),
    "x-ratelimit-remaining": String(d.remaining),
    "x-ratelimit-reset": String(d.reset_seconds),
    "ratelimit-policy": `"${d.policy}";q=${d.limit};w=${WINDOW_SECONDS}`,
    "ratelimit": `"${d.policy}";r=${d.remaining};t=${d.reset_seconds}`
  }
  if (!d.allowed) headers["retry-after"] = String(d.reset_seconds)
  return headers
}
