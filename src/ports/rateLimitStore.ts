/**
 * The rate-limit store port: a fixed-window counter per key. The memory adapter keeps it in
 * the process (adapters/memory/ratelimit.ts); a shared store (Redis `INCR` + `PEXPIRE`, a
 * SQL upsert) makes the limit hold across processes when the server scales out.
 */
import { Context, type Effect } from "effect"
import type { StorageFailure } from "../domain/errors.js"
import type { WindowCount } from "../ratelimit/policy.js"

export interface RateLimitStoreService {
  /**
   * Counts one request for `key` at `now` (epoch ms): in the key's open window, or in a new
   * one of `windowMs` starting now if none is open. Returns the window after counting.
   */
  readonly hit: (key: string, windowMs: number, now: number) => Effect.Effect<WindowCount, StorageFailure>
}

export class RateLimitStore extends Context.Tag("slotwise/RateLimitStore")<RateLimitStore, RateLimitStoreService>() {}
