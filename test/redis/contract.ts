/**
 * What every rate-limit store does, whichever keeps the counters: a fixed window from a
 * key's first request, every request counted, keys apart, no count lost under concurrency.
 * The figures go through the core's `decide`, so they are the headers a client sees.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, type Layer } from "effect"
import { randomUUID } from "node:crypto"
import { decide, type Policy, WINDOW_MS } from "../../src/ratelimit/policy.js"
import { RateLimitStore } from "../../src/ports/rateLimitStore.js"

/** A fixed instant: the store must use the `now` it is given, never its own clock. */
export const T0 = 1_700_000_000_000

/** A key no other test (or earlier run against a shared Redis) has used. */
export const freshKey = (what: string) => `${what}:${randomUUID()}`

const policy = (key: string, limit: number): Policy => ({ key, name: "custom", limit })

export const rateLimitStoreContract = (name: string, makeLayer: () => Layer.Layer<RateLimitStore>) => {
  const withStore = <A, E>(body: (store: RateLimitStore["Type"]) => Effect.Effect<A, E>) =>
    Effect.provide(Effect.flatMap(RateLimitStore, body), makeLayer())

  describe(`rate-limit store contract: ${name}`, () => {
    it.live("counts a key's requests in one window from its first request; the figures are exact", () =>
      withStore((store) =>
        Effect.gen(function*() {
          const key = freshKey("count")
          const limit = policy(key, 3)
          const at = [T0, T0 + 1, T0 + 30_000, T0 + 59_999]
          const decisions = []
          for (const now of at) {
            const window = yield* store.hit(key, WINDOW_MS, now)
            expect(window.reset_ms).toBe(T0 + WINDOW_MS)
            decisions.push(decide(limit, window, now))
          }
          expect(decisions.map((d) => [d.allowed, d.remaining, d.reset_seconds])).toEqual([
            [true, 2, 60],
            [true, 1, 60],
            [true, 0, 30],
            [false, 0, 1]
          ])
        })
      ))

    it.live("a window ends at its reset: the next request opens a new one, refused ones counted before", () =>
      withStore((store) =>
        Effect.gen(function*() {
          const key = freshKey("reset")
          for (let i = 1; i <= 5; i++) expect((yield* store.hit(key, WINDOW_MS, T0)).count).toBe(i)
          expect(yield* store.hit(key, WINDOW_MS, T0 + WINDOW_MS)).toEqual({ count: 1, reset_ms: T0 + 2 * WINDOW_MS })
          expect(yield* store.hit(key, WINDOW_MS, T0 + WINDOW_MS + 10)).toEqual({ count: 2, reset_ms: T0 + 2 * WINDOW_MS })
          // The window that opens takes the length this request asks for.
          expect(yield* store.hit(key, 1_000, T0 + 2 * WINDOW_MS)).toEqual({ count: 1, reset_ms: T0 + 2 * WINDOW_MS + 1_000 })
        })
      ))

    it.live("keys count apart", () =>
      withStore((store) =>
        Effect.gen(function*() {
          const a = freshKey("a")
          const b = freshKey("b")
          yield* store.hit(a, WINDOW_MS, T0)
          yield* store.hit(a, WINDOW_MS, T0)
          expect(yield* store.hit(b, WINDOW_MS, T0 + 5)).toEqual({ count: 1, reset_ms: T0 + 5 + WINDOW_MS })
          expect((yield* store.hit(a, WINDOW_MS, T0 + 5)).count).toBe(3)
        })
      ))

    it.live("200 concurrent requests under a limit of 60: exactly 60 admitted, every count handed out once", () =>
      withStore((store) =>
        Effect.gen(function*() {
          const key = freshKey("burst")
          const windows = yield* Effect.all(
            Array.from({ length: 200 }, (_, i) => store.hit(key, WINDOW_MS, T0 + i)),
            { concurrency: "unbounded" }
          )
          const decisions = windows.map((w, i) => decide(policy(key, 60), w, T0 + i))
          expect(decisions.filter((d) => d.allowed)).toHaveLength(60)
          expect(windows.map((w) => w.count).sort((x, y) => x - y)).toEqual(Array.from({ length: 200 }, (_, i) => i + 1))
          expect(new Set(windows.map((w) => w.reset_ms)).size).toBe(1)
        })
      ))
  })
}
