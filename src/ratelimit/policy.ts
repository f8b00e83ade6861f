/**
 * The rate-limit policy (docs/api.md §1), pure and in one place: which limit applies to every
 * kind of caller (API key, publishable-key visitor, operator, anonymous address, sign-in
 * attempt, manage link), how a fixed window counts, the figures every response reports and
 * the refusal. Windows start with a key's first request and last 60 s unless a policy says
 * otherwise; when one ends the quota is full again. Stores only count; adapters only ask.
 */
import type { Caller } from "../auth/access.js"
import { type Account, PLAN_RATE_LIMITS, requestsPerMinute } from "../accounts/account.js"
import { RateLimited } from "../domain/errors.js"
import type { Visitor } from "../domain/visitor.js"
import type { TenantId } from "../ports/tenant.js"

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

/** The operator's own counter: counted too, so a runaway script shows, but generously. */
export const OPERATOR_LIMIT = 100_000
export const OPERATOR_POLICY: Policy = { key: "operator", name: "operator", limit: OPERATOR_LIMIT }

/**
 * The policy of an API request by who is calling: a secret key's own counter, a publishable
 * key's visitor's, the operator's, or, without a valid credential, the client address's.
 * `address` is read only when the address is the key.
 */
export const policyForCaller = (caller: Caller | undefined, address: () => string, visitor?: Visitor): Policy =>
  caller?._tag === "Authenticated"
    ? visitor === undefined
      ? policyForKey(caller.principal.account, caller.principal.key.id)
      : policyForVisitor(caller.principal.account, visitor)
    : caller?._tag === "Operator"
    ? OPERATOR_POLICY
    : policyForAddress(address())

/** Sign-in attempts per minute (the OAuth sign-in form): per account and email, and per client address. */
export interface SignInLimits {
  readonly perEmail: number
  readonly perAddress: number
}
export const SIGN_IN_LIMITS: SignInLimits = { perEmail: 10, perAddress: 30 }

/** Both counters a sign-in attempt spends; `emailKey` is the normalised email. */
export const signInPolicies = (
  accountId: string,
  emailKey: string,
  address: string,
  limits: SignInLimits = SIGN_IN_LIMITS
): readonly [perEmail: Policy, perAddress: Policy] => [
  { key: `signin:${accountId}:${emailKey}`, name: "sign-in", limit: limits.perEmail },
  { key: `signin-ip:${address}`, name: "sign-in", limit: limits.perAddress }
]

/** Counters that must stay metered even while a shared store is away (password guessing). */
export const isSignInKey = (key: string): boolean => key.startsWith("signin:") || key.startsWith("signin-ip:")

/** Limits of the manage endpoints (the token is the credential, so the client address is counted). */
export const MANAGE_LIMITS = {
  /** Requests per client address per minute, any manage endpoint, valid token or not. */
  perAddressPerMinute: 30,
  /** Cancels and reschedules per booking per hour. */
  writesPerBookingPerHour: 10
} as const

/** Every manage request, counted by client address: slows guessing and scraping. */
export const manageAddressPolicy = (address: string): Policy => ({
  key: `manage-ip:${address}`,
  name: "manage",
  limit: MANAGE_LIMITS.perAddressPerMinute
})

/** A client's cancels and reschedules, counted by booking (so a new link does not reset them). */
export const manageWritePolicy = (tenant: TenantId, bookingId: string): Policy => ({
  key: `manage-write:${tenant.account_id}:${tenant.environment}:${bookingId}`,
  name: "manage-writes",
  limit: MANAGE_LIMITS.writesPerBookingPerHour,
  window_seconds: 3600
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

/** The window's length in words, for a refusal's detail. */
const windowWords = (policy: Policy): string => {
  const seconds = policy.window_seconds ?? WINDOW_SECONDS
  return seconds === WINDOW_SECONDS ? "minute" : seconds === 3600 ? "hour" : `${seconds} s`
}

/** The 429 of a decision over its limit; undefined when the request is allowed. */
export const refusalOf = (policy: Policy, d: Decision): RateLimited | undefined =>
  d.allowed ? undefined : new RateLimited({
    detail: `rate limit of ${d.limit} requests per ${windowWords(policy)} exceeded; retry in ${d.reset_seconds} s`,
    retry_after_seconds: d.reset_seconds
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
