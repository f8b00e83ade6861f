/**
 * The shared rate-limit store on Redis: every server process counts a key in one place, so
 * a limit holds however many processes serve the API.
 *
 * Why our own script over ioredis and not `@effect/experimental`'s RateLimiter Redis store:
 * its "fixed window" is a different algorithm (each admitted request extends the key's TTL
 * by window/limit, and requests over the limit are not counted), it reads Redis's clock
 * rather than the `now` the core passes, and its layer gives no hold on connection options
 * or outage logging. The core's policy needs the port's exact semantics (docs/api.md headers:
 * limit, remaining, reset seconds), the same as the memory store: one counter per key, a
 * window of `windowMs` from the key's first request, every request counted. That is one
 * five-line Lua script, atomic in Redis, so concurrent processes never lose a count.
 *
 * Outages. The API must not go down with Redis: while Redis is unreachable (or a command
 * fails or times out) a request is admitted as the first of a fresh window, which is what
 * the core's rate limiter reports for a store fault, and the store logs once when the
 * outage starts and once when it ends rather than once per request. Keys that must never
 * go unmetered (sign-in attempts, against password guessing) can be given a fallback
 * store instead: while Redis is away they are counted there, in this process. No request
 * waits on a dead Redis: commands are not queued while disconnected (`enableOfflineQueue:
 * false`), are not retried (`maxRetriesPerRequest: 0`), and time out after
 * `commandTimeoutMs`; ioredis reconnects in the background.
 */
import { Effect, Layer, type Scope } from "effect"
import { Redis } from "ioredis"
import type { StorageFailure } from "../../src/domain/errors.js"
import type { WindowCount } from "../../src/ratelimit/policy.js"
import { RateLimitStore, type RateLimitStoreService } from "../../src/ports/rateLimitStore.js"

export interface RedisRateLimitStoreOptions {
  /** `redis://[user:password@]host:port[/db]` (or `rediss://` for TLS). */
  readonly url: string
  /** Prefix of every counter's key (default `slotwise:ratelimit:`). */
  readonly prefix?: string | undefined
  /**
   * Longest a request waits for Redis before it is admitted unmetered (default 1,000 ms). A
   * dead or unreachable Redis fails at once (nothing is queued); this bounds only a Redis
   * that holds the connection open without answering. It must be long enough that a reply
   * delayed by a busy event loop is not taken for an outage, or limits would leak under load.
   */
  readonly commandTimeoutMs?: number | undefined
  /** Longest a (re)connection attempt may take, in the background (default 500 ms). */
  readonly connectTimeoutMs?: number | undefined
  /**
   * Where the keys `fallback.keys` accepts are counted while Redis is unreachable, rather
   * than admitted (default: none, every request is admitted). A per-process store keeps
   * such a limit at its figure per process through an outage.
   */
  readonly fallback?: RateLimitFallback | undefined
}

export interface RateLimitFallback {
  readonly store: RateLimitStoreService
  readonly keys: (key: string) => boolean
}

/**
 * KEYS[1]: the counter, a hash { reset, count }. ARGV: now (epoch ms), the window (ms).
 * A window that has ended (by the caller's clock) starts over at this request; the key's
 * TTL only cleans up counters nobody hits any more.
 */
const HIT = `
local now = tonumber(ARGV[1])
local reset = tonumber(redis.call("HGET", KEYS[1], "reset"))
if reset == nil or now >= reset then
  reset = now + tonumber(ARGV[2])
  -- Written as whole digits, never in a float or exponent form.
  redis.call("HSET", KEYS[1], "reset", string.format("%d", reset), "count", 1)
  redis.call("PEXPIRE", KEYS[1], ARGV[2])
  return {1, reset}
end
return {redis.call("HINCRBY", KEYS[1], "count", 1), reset}
`

type WithHit = Redis & {
  hit: (key: string, now: number, windowMs: number) => Promise<[number, number]>
}

/** Reconnection delays: 50 ms growing to at most 1 s, for as long as it takes. */
const retryStrategy = (attempt: number): number => Math.min(attempt * 50, 1000)

/** Closes the connection: politely when it is up, at once otherwise. */
const close = (redis: Redis): Effect.Effect<void> =>
  (redis.status === "ready"
    ? Effect.ignore(Effect.tryPromise(() => redis.quit()))
    : Effect.void).pipe(Effect.ensuring(Effect.sync(() => redis.disconnect())))

/** The URL without its password, for logs. */
const redactedUrl = (url: string): string => {
  try {
    const parsed = new URL(url)
    if (parsed.password !== "") parsed.password = "***"
    return parsed.toString()
  } catch {
    return "the Redis URL"
  }
}

/**
 * A store on the Redis at `options.url`. It waits up to `connectTimeoutMs` for the first
 * connection and never fails: a Redis that is down at start is an outage like any other.
 */
export const makeRedisRateLimitStore = (
  options: RedisRateLimitStoreOptions
): Effect.Effect<RateLimitStoreService, never, Scope.Scope> =>
  Effect.gen(function*() {
    const prefix = options.prefix ?? "slotwise:ratelimit:"
    const fallback = options.fallback
    const connectTimeout = options.connectTimeoutMs ?? 500
    const redis = yield* Effect.acquireRelease(
      Effect.sync(() =>
        new Redis(options.url, {
          enableOfflineQueue: false,
          maxRetriesPerRequest: 0,
          autoResendUnfulfilledCommands: false,
          commandTimeout: options.commandTimeoutMs ?? 1_000,
          connectTimeout,
          retryStrategy,
          scripts: { hit: { lua: HIT, numberOfKeys: 1 } }
        }) as WithHit
      ),
      close
    )
    // Without a listener ioredis prints every failed reconnection; the store logs outages itself.
    redis.on("error", () => {})

    let down = false
    const unreachable = (cause: unknown) =>
      Effect.suspend(() => {
        if (down) return Effect.void
        down = true
        return Effect.logWarning(
          `rate-limit store: Redis at ${redactedUrl(options.url)} unreachable; admitting requests unmetered until it is back${
            fallback === undefined ? "" : "; keys with a fallback are counted in this process"
          }`,
          cause
        )
      })
    const reachable = Effect.suspend(() => {
      if (!down) return Effect.void
      down = false
      return Effect.logInfo("rate-limit store: Redis reachable again; counting resumes")
    })

    // The first connection, on a plain timer (a TestClock in context must not stall start-up).
    const connected = yield* Effect.async<boolean>((resume) => {
      if (redis.status === "ready") return resume(Effect.succeed(true))
      const ready = () => done(true)
      const timer = setTimeout(() => done(false), connectTimeout)
      const done = (ok: boolean) => {
        clearTimeout(timer)
        redis.off("ready", ready)
        resume(Effect.succeed(ok))
      }
      redis.once("ready", ready)
      return Effect.sync(() => done(false))
    })
    if (!connected) yield* unreachable(`no connection within ${connectTimeout} ms`)

    /** A request's window while Redis is away: counted in the fallback store, or admitted as a first request. */
    const withoutRedis = (key: string, windowMs: number, now: number) =>
      fallback !== undefined && fallback.keys(key)
        ? fallback.store.hit(key, windowMs, now)
        : Effect.succeed<WindowCount>({ count: 1, reset_ms: now + windowMs })

    const hit = (key: string, windowMs: number, now: number): Effect.Effect<WindowCount, StorageFailure> =>
      Effect.tryPromise(() => redis.hit(prefix + key, now, windowMs)).pipe(
        Effect.matchEffect({
          onFailure: (error) => Effect.zipRight(unreachable(error.cause), withoutRedis(key, windowMs, now)),
          onSuccess: ([count, reset_ms]) => Effect.as(reachable, { count, reset_ms })
        })
      )
    return RateLimitStore.of({ hit })
  })

/** The store as a layer; the connection closes with the layer's scope. */
export const RedisRateLimitStoreLive = (options: RedisRateLimitStoreOptions): Layer.Layer<RateLimitStore> =>
  Layer.scoped(RateLimitStore, makeRedisRateLimitStore(options))
