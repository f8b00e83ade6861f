/** The rate limiter: the policy over the store, on Effect's clock. */
import { Clock, Effect } from "effect"
import { type Decision, decide, type Policy, WINDOW_MS } from "./policy.js"
import { RateLimitStore } from "./store.js"

export class RateLimiter extends Effect.Service<RateLimiter>()("slotwise/RateLimiter", {
  effect: Effect.gen(function*() {
    const store = yield* RateLimitStore
    /** Counts a request under `policy` and says whether it is allowed, with the figures to report. */
    const check = (policy: Policy): Effect.Effect<Decision, never> =>
      Effect.gen(function*() {
        const now = yield* Clock.currentTimeMillis
        const window = yield* store.hit(policy.key, WINDOW_MS, now).pipe(
          // A store fault must not take the API down: admit the request, report a fresh window.
          Effect.catchAll((error) =>
            Effect.as(Effect.logWarning("rate-limit store failed; admitting request", error), {
              count: 1,
              reset_ms: now + WINDOW_MS
            }))
        )
        return decide(policy, window, now)
      })
    return { check } as const
  })
}) {}
