/**
 * Rate-limit step: counts the request under the policy the core picks for its caller; every
 * response from here on carries the figures, and an exhausted quota is a 429.
 */
import { Effect } from "effect"
import { headersOf, type Policy } from "../../../src/ratelimit/policy.js"
import type { RateLimiter } from "../../../src/ratelimit/RateLimiter.js"

export { policyForCaller as policyOf } from "../../../src/ratelimit/policy.js"

/** Counts the request: the headers every response now carries, and the 429 when the quota is spent. */
export const countRequest = (limiter: RateLimiter, policy: Policy) =>
  Effect.map(limiter.count(policy), ({ decision, refusal }) => ({ headers: headersOf(decision), refusal }))
