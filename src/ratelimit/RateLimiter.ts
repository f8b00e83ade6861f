/** The rate limiter: the policy over the store, on Effect's clock. */
import { Clock, Effect } from "effect"
import type { RateLimited } from "../domain/errors.js"
import { type Decision, decide, type Policy, refusalOf, WINDOW_MS } from "./policy.js"
import { RateLimitStore } from "../ports/rateLimitStore.js"

export class RateLimiter extends Effect.Service<RateLimiter>()("slotwise/RateLimiter", {
  effect: Effect.gen(function*() {
    const store = yield* RateLimitStore
    /** Counts a request under `policy` and says whether it is allowed, with the figures to report. */
    // Plain combinators, not a generator: this runs on every request.
    const check = (policy: Policy): Effect.Effect<Decision, never> =>
      Clock.clockWith((clock) => {
        const now = clock.unsafeCurrentTimeMillis()
        const windowMs = policy.window_seconds === undefined ? WINDOW_MS : policy.window_seconds * 1000
        return Effect.catchAll(
          Effect.map(store.hit(policy.key, windowMs, now), (window) => decide(policy, window, now)),
          // A store fault must not take the API down: admit the request, report a fresh window.
          (error) =>
            Effect.as(
              Effect.logWarning("rate-limit store failed; admitting request", error),
              decide(policy, { count: 1, reset_ms: now + windowMs }, now)
            )
        )
      })
    /** Counts a request: its decision, with the policy's `rate_limited` refusal when the quota is spent. */
    const count = (policy: Policy): Effect.Effect<{ readonly decision: Decision; readonly refusal: RateLimited | undefined }> =>
      Effect.map(check(policy), (decision) => ({ decision, refusal: refusalOf(policy, decision) }))
    /** Counts a request and fails with the refusal when the quota is spent. */
    const enforce = (policy: Policy): Effect.Effect<void, RateLimited> =>
      Effect.flatMap(count(policy), ({ refusal }) => refusal === undefined ? Effect.void : Effect.fail(refusal))
    return { check, count, enforce } as const
  })
}) {}
