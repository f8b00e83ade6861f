/**
 * Rate-limit step: count the request against its credential (the key's id, the operator's
 * own counter; a publishable key's per client address) or, without one, its client address;
 * every response from here on carries the figures, and an exhausted quota is a 429.
 */
import { Effect } from "effect"
import type { Caller } from "../../../src/auth/access.js"
import { RateLimited } from "../../../src/domain/errors.js"
import type { Visitor } from "../../../src/domain/visitor.js"
import { headersOf, type Policy, policyForAddress, policyForKey, policyForVisitor } from "../../../src/ratelimit/policy.js"
import type { RateLimiter } from "../../../src/ratelimit/RateLimiter.js"

/** The operator's requests are counted too, generously. */
const OPERATOR_POLICY: Policy = { key: "operator", name: "operator", limit: 100_000 }

export const policyOf = (caller: Caller | undefined, address: () => string, visitor?: Visitor): Policy =>
  caller?._tag === "Authenticated"
    ? visitor === undefined
      ? policyForKey(caller.principal.account, caller.principal.key.id)
      : policyForVisitor(caller.principal.account, visitor)
    : caller?._tag === "Operator"
    ? OPERATOR_POLICY
    : policyForAddress(address())

/** Counts the request: the headers every response now carries, and the 429 when the quota is spent. */
export const countRequest = (limiter: RateLimiter, policy: Policy) =>
  Effect.map(limiter.check(policy), (decision) => ({
    headers: headersOf(decision),
    refusal: decision.allowed ? undefined : new RateLimited({
      detail: `rate limit of ${decision.limit} requests per minute exceeded; retry in ${decision.reset_seconds} s`,
      retry_after_seconds: decision.reset_seconds
    })
  }))
