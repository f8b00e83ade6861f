/**
 * The Redis rate-limit store against a real Redis: `SLOTWISE_TEST_REDIS_URL`, by default
 * redis://127.0.0.1:6379 (unreachable: the tests fail, they never skip). Keys go under a
 * prefix of this run and are deleted at the end. The outage test runs its own redis-server
 * on a free port, kills it and starts it again; the machine's Redis is never touched.
 */
import { afterAll, describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Logger } from "effect"
import { type ChildProcess, spawn } from "node:child_process"
import { randomUUID } from "node:crypto"
import { createServer } from "node:net"
import { Redis } from "ioredis"
import { MemoryRateLimitStoreLive } from "../../adapters/memory/ratelimit.js"
import { RedisRateLimitStoreLive } from "../../adapters/redis/ratelimit.js"
import { WINDOW_MS } from "../../src/ratelimit/policy.js"
import { RateLimitStore } from "../../src/ratelimit/store.js"
import { freshKey, rateLimitStoreContract, T0 } from "./contract.js"

const url = process.env.SLOTWISE_TEST_REDIS_URL ?? "redis://127.0.0.1:6379"
const prefix = `slotwise-test:${process.pid}-${randomUUID().slice(0, 8)}:`

/**
 * A plain client for checks and clean-up, connected once; it fails fast instead of waiting
 * for Redis, and every test that needs Redis fails (never skips) when it cannot connect.
 */
const raw = new Redis(url, { lazyConnect: true, connectTimeout: 3_000, maxRetriesPerRequest: 0, retryStrategy: () => null })
raw.on("error", () => {})
let connecting: Promise<void> | undefined
const reachable = Effect.tryPromise({
  try: () => (connecting ??= raw.connect().then(() => raw.ping()).then(() => undefined)),
  catch: (cause) => new Error(`no Redis at ${url} (set SLOTWISE_TEST_REDIS_URL to a reachable one)`, { cause })
}).pipe(Effect.orDie)
afterAll(async () => {
  if (raw.status !== "ready") return
  const keys = await raw.keys(`${prefix}*`)
  if (keys.length > 0) await raw.del(...keys)
  await raw.quit()
})

// Generous timeouts: a loaded test machine must not turn a slow reply into an admitted one.
const store = () =>
  RedisRateLimitStoreLive({ url, prefix, commandTimeoutMs: 5_000 }).pipe(Layer.provide(Layer.effectDiscard(reachable)))

rateLimitStoreContract("memory", () => MemoryRateLimitStoreLive)
rateLimitStoreContract("redis", () => store())

/** Checks `probe` until `ok`, for at most `ms`. */
const eventually = <A, E>(what: string, probe: Effect.Effect<A, E>, ok: (a: A) => boolean, ms = 10_000) =>
  Effect.gen(function*() {
    const deadline = Date.now() + ms
    for (;;) {
      const a = yield* probe
      if (ok(a)) return a
      if (Date.now() > deadline) return yield* Effect.die(new Error(`not within ${ms} ms: ${what}`))
      yield* Effect.sleep("20 millis")
    }
  })

describe("redis rate-limit store", () => {
  it.live("two stores (two connections, like two processes) share one counter, under the prefix, with a TTL", () =>
    Effect.gen(function*() {
      const key = freshKey("shared")
      const hits = (n: number) =>
        Effect.flatMap(RateLimitStore, (s) =>
          Effect.forEach(Array.from({ length: n }), () => s.hit(key, WINDOW_MS, T0 + 1)))
      const one = yield* Effect.provide(hits(3), store())
      const two = yield* Effect.provide(hits(2), store())
      expect([...one, ...two].map((w) => w.count)).toEqual([1, 2, 3, 4, 5])
      expect(new Set([...one, ...two].map((w) => w.reset_ms))).toEqual(new Set([T0 + 1 + WINDOW_MS]))
      const ttl = yield* Effect.promise(() => raw.pttl(prefix + key))
      expect(ttl).toBeGreaterThan(0)
      expect(ttl).toBeLessThanOrEqual(WINDOW_MS)
    }))

  it.live("Redis down and back: requests admitted at once, one log line per outage, counting resumes by itself", () =>
    Effect.gen(function*() {
      const port = yield* Effect.promise(freePort)
      const own = `redis://127.0.0.1:${port}`
      yield* Effect.acquireRelease(Effect.promise(() => startRedis(port)), () => Effect.promise(() => stopRedis(running.get(port)!)))
      const lines: Array<{ readonly level: string; readonly text: string }> = []
      const logger = Logger.replace(
        Logger.defaultLogger,
        Logger.make(({ logLevel, message }) =>
          lines.push({ level: logLevel.label, text: String(Array.isArray(message) ? message[0] : message) }))
      )
      const warnings = () => lines.filter((l) => l.level === "WARN")

      yield* Effect.gen(function*() {
        const s = yield* RateLimitStore
        const key = freshKey("outage")
        const hit = s.hit(key, WINDOW_MS, T0)
        expect((yield* hit).count).toBe(1)
        expect((yield* hit).count).toBe(2)
        expect(lines).toEqual([])

        yield* Effect.promise(() => stopRedis(running.get(port)!))
        // Admitted as the first of a fresh window, each at once (commands are not queued while
        // disconnected, and time out after 150 ms); 2 s only bounds the test.
        for (let i = 0; i < 20; i++) {
          const window = yield* Effect.timeoutFail(hit, { duration: "2 seconds", onTimeout: () => new Error("hit hung") })
          expect(window).toEqual({ count: 1, reset_ms: T0 + WINDOW_MS })
        }
        expect(warnings()).toHaveLength(1)
        expect(warnings()[0]!.text).toContain("Redis unreachable")

        yield* Effect.promise(() => startRedis(port))
        // The restarted server is empty: the counter starts over, and only Redis counts to 2.
        yield* eventually("the store reconnects", hit, (w) => w.count >= 2)
        const next = yield* hit
        expect(next.count).toBeGreaterThanOrEqual(3)
        expect((yield* hit).count).toBe(next.count + 1)
        expect(warnings()).toHaveLength(1)
        expect(lines.filter((l) => l.text.includes("reachable again"))).toHaveLength(1)
      }).pipe(Effect.provide(RedisRateLimitStoreLive({ url: own, prefix })), Effect.provide(logger))
    }).pipe(Effect.scoped))

  it.live("a Redis that is down at start: the layer still builds, requests are admitted, one log line", () =>
    Effect.gen(function*() {
      const port = yield* Effect.promise(freePort)
      const lines: Array<string> = []
      const logger = Logger.replace(Logger.defaultLogger, Logger.make(({ logLevel }) => lines.push(logLevel.label)))
      yield* Effect.gen(function*() {
        const s = yield* RateLimitStore
        for (let i = 0; i < 5; i++) expect(yield* s.hit("k", WINDOW_MS, T0)).toEqual({ count: 1, reset_ms: T0 + WINDOW_MS })
      }).pipe(
        Effect.provide(RedisRateLimitStoreLive({ url: `redis://127.0.0.1:${port}`, prefix, connectTimeoutMs: 200 })),
        Effect.provide(logger)
      )
      expect(lines).toEqual(["WARN"])
    }))
})

/** A local port nobody listens on now. */
const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const server = createServer()
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number }
      server.close(() => resolve(port))
    })
  })

const running = new Map<number, ChildProcess>()

/** A throwaway redis-server on `port` (no persistence), once it accepts connections. */
const startRedis = (port: number) =>
  new Promise<ChildProcess>((resolve, reject) => {
    const child = spawn("redis-server", ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"], {
      stdio: ["ignore", "pipe", "pipe"]
    })
    running.set(port, child)
    let output = ""
    const timer = setTimeout(() => fail(new Error(`redis-server on ${port} not ready in 10 s:\n${output}`)), 10_000)
    const fail = (error: Error) => {
      clearTimeout(timer)
      child.kill("SIGKILL")
      reject(error)
    }
    child.once("error", fail)
    child.once("exit", (code) => fail(new Error(`redis-server on ${port} exited (${code}):\n${output}`)))
    child.stdout!.on("data", (chunk: Buffer) => {
      output += chunk.toString()
      if (output.includes("Ready to accept connections")) {
        clearTimeout(timer)
        child.removeAllListeners("exit")
        resolve(child)
      }
    })
    child.stderr!.on("data", (chunk: Buffer) => {
      output += chunk.toString()
    })
  })

/** Kills a redis-server and waits for it to be gone. */
const stopRedis = (child: ChildProcess) =>
  new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve()
    child.once("exit", () => resolve())
    child.kill("SIGKILL")
  })

afterAll(async () => {
  await Promise.all([...running.values()].map(stopRedis))
})
