/**
 * In-process rate-limit store: one fixed-window counter per key in a Map, swept of ended
 * windows as it grows. Each server process counts on its own; a shared store replaces this
 * layer when several processes serve one database.
 */
import { Effect, Layer } from "effect"
import { RateLimitStore } from "../../src/ports/rateLimitStore.js"

const SWEEP_AT = 10_000

export const makeMemoryRateLimitStore = () => {
  const windows = new Map<string, { count: number; reset_ms: number }>()
  return RateLimitStore.of({
    hit: (key, windowMs, now) =>
      Effect.sync(() => {
        let window = windows.get(key)
        if (window === undefined || now >= window.reset_ms) {
          if (windows.size >= SWEEP_AT) {
            for (const [k, w] of windows) if (now >= w.reset_ms) windows.delete(k)
          }
          window = { count: 0, reset_ms: now + windowMs }
          windows.set(key, window)
        }
        window.count += 1
        return { count: window.count, reset_ms: window.reset_ms }
      })
  })
}

export const MemoryRateLimitStoreLive: Layer.Layer<RateLimitStore> = Layer.sync(RateLimitStore, makeMemoryRateLimitStore)
