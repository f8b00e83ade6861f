/**
 * The Redis rate-limit store against a real Redis: `SLOTWISE_TEST_REDIS_URL`, by default
 * redis://127.0.0.1:6379 (unreachable: the tests fail, they never skip). Keys go under a
 * prefix of this run and are deleted at the end. The outage tests run their own redis-server
 * on a free port (killed, restarted, or cut off behind a relay); the machine's Redis is never
 * touched.
 */
import { afterAll, describe, expect, it } from "@effect/vitest"
import { Context, Effect, Layer, Logger } from "effect"
import { type ChildProcess, spawn } from "node:child_process"
import { randomUUID } from "node:crypto"
import { connect, createServer, type Socket } from "node:net"
import { Redis } from "ioredis"
import { makeMemoryRateLimitStore, MemoryRateLimitStoreLive } from "../../adapters/memory/ratelimit.js"
import { RedisRateLimitStoreLive } from "../../adapters/redis/ratelimit.js"
import { WINDOW_MS } from "../../src/ratelimit/policy.js"
import { RateLimitStore } from "../../src/ports/rateLimitStore.js"
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
const store = () => RedisRateLimitStoreLive({ url, prefix, commandTimeoutMs: 5_000 }).pipe(Layer.provide(Layer.effectDiscard(reachable)))

rateLimitStoreContract("memory", () => MemoryRateLimitStoreLive)
rateLimitStoreContract("redis", () => store())

/** Log lines (level and first message) written by the effects it is provided to. */
const captureLogs = () => {
  const lines: Array<{ readonly level: string; readonly text: string }> = []
  const logger = Logger.replace(
    Logger.defaultLogger,
    Logger.make(({ logLevel, message }) =>
      lines.push({ level: logLevel.label, text: String(Array.isArray(message) ? message[0] : message) })
    )
  )
  return { lines, logger }
}

/** `effect`, failing the test if it takes more than 5 s (a hung request). */
const bounded = <A, E>(effect: Effect.Effect<A, E>) =>
  Effect.timeoutFail(effect, { duration: "5 seconds", onTimeout: () => new Error("a request hung on Redis") })

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
  it.live("two stores at once (two connections, like two processes) share one counter, under the prefix, with a TTL", () =>
    Effect.gen(function*() {
      const open = Effect.map(Layer.build(store()), Context.get(RateLimitStore))
      const [one, two] = yield* Effect.all([open, open])
      const key = freshKey("shared")
      const counts: Array<number> = []
      for (const s of [one, two, two, one, two]) counts.push((yield* s.hit(key, WINDOW_MS, T0 + 1)).count)
      expect(counts).toEqual([1, 2, 3, 4, 5])
      const ttl = yield* Effect.promise(() => raw.pttl(prefix + key))
      expect(ttl).toBeGreaterThan(0)
      expect(ttl).toBeLessThanOrEqual(WINDOW_MS)

      // 100 concurrent requests through each, limit 60: 60 admitted in all.
      const burst = freshKey("shared-burst")
      const windows = yield* Effect.all(
        Array.from({ length: 200 }, (_, i) => (i % 2 === 0 ? one : two).hit(burst, WINDOW_MS, T0)),
        { concurrency: "unbounded" }
      )
      expect(windows.filter((w) => w.count <= 60)).toHaveLength(60)
      expect(new Set(windows.map((w) => w.count)).size).toBe(200)
    }).pipe(Effect.scoped))

  it.live("Redis killed and restarted: requests admitted at once, one log line per outage, counting resumes by itself", () =>
    Effect.gen(function*() {
      const port = yield* Effect.promise(freePort)
      yield* Effect.acquireRelease(Effect.promise(() => startRedis(port)), () => Effect.promise(() => stopRedis(port)))
      const { lines, logger } = captureLogs()
      yield* Effect.gen(function*() {
        const s = yield* RateLimitStore
        const hit = s.hit(freshKey("outage"), WINDOW_MS, T0)
        expect((yield* hit).count).toBe(1)
        expect((yield* hit).count).toBe(2)
        expect(lines).toEqual([])

        yield* Effect.promise(() => stopRedis(port))
        // Refused at once (nothing is queued while disconnected); 5 s only bounds the test.
        for (let i = 0; i < 20; i++) expect(yield* bounded(hit)).toEqual({ count: 1, reset_ms: T0 + WINDOW_MS })
        expect(lines).toEqual([{ level: "WARN", text: expect.stringContaining("unreachable") }])

        yield* Effect.promise(() => startRedis(port))
        // The restarted server is empty: the counter starts over, and only Redis counts to 2.
        yield* eventually("the store reconnects", hit, (w) => w.count >= 2)
        const next = yield* hit
        expect((yield* hit).count).toBe(next.count + 1)
        expect(lines).toEqual([
          { level: "WARN", text: expect.stringContaining("unreachable") },
          { level: "INFO", text: expect.stringContaining("reachable again") }
        ])
      }).pipe(
        Effect.provide(RedisRateLimitStoreLive({ url: `redis://127.0.0.1:${port}`, prefix, commandTimeoutMs: 1_000 })),
        Effect.provide(logger)
      )
    }).pipe(Effect.scoped))

  it.live("a Redis that stops answering (connection open): each request admitted after the command timeout", () =>
    Effect.gen(function*() {
      const port = yield* Effect.promise(freePort)
      yield* Effect.acquireRelease(Effect.promise(() => startRedis(port)), () => Effect.promise(() => stopRedis(port)))
      const proxy = yield* Effect.acquireRelease(Effect.promise(() => freezableProxy(port)), (p) => Effect.promise(p.close))
      const { lines, logger } = captureLogs()
      yield* Effect.gen(function*() {
        const s = yield* RateLimitStore
        const hit = s.hit(freshKey("frozen"), WINDOW_MS, T0)
        expect((yield* hit).count).toBe(1)

        proxy.freeze()
        for (let i = 0; i < 3; i++) expect(yield* bounded(hit)).toEqual({ count: 1, reset_ms: T0 + WINDOW_MS })
        expect(lines.map((l) => l.level)).toEqual(["WARN"])

        // The held replies arrive in order; the counter kept every request Redis received.
        proxy.thaw()
        const back = yield* eventually("answers again", hit, (w) => w.count > 1)
        expect(back.count).toBe(5)
        expect(lines.map((l) => l.level)).toEqual(["WARN", "INFO"])
      }).pipe(
        Effect.provide(RedisRateLimitStoreLive({ url: `redis://127.0.0.1:${proxy.port}`, prefix, commandTimeoutMs: 1_000 })),
        Effect.provide(logger)
      )
    }).pipe(Effect.scoped))

  it.live("a Redis that is down at start: the layer still builds, requests are admitted, one log line", () =>
    Effect.gen(function*() {
      const port = yield* Effect.promise(freePort)
      const { lines, logger } = captureLogs()
      yield* Effect.gen(function*() {
        const s = yield* RateLimitStore
        for (let i = 0; i < 5; i++) expect(yield* s.hit("k", WINDOW_MS, T0)).toEqual({ count: 1, reset_ms: T0 + WINDOW_MS })
      }).pipe(
        Effect.provide(RedisRateLimitStoreLive({ url: `redis://127.0.0.1:${port}`, prefix, connectTimeoutMs: 200 })),
        Effect.provide(logger)
      )
      expect(lines.map((l) => l.level)).toEqual(["WARN"])
    }))

  it.live("while Redis is unreachable, keys with a fallback are counted in the fallback store; the others are admitted", () =>
    Effect.gen(function*() {
      const port = yield* Effect.promise(freePort)
      const fallback = { store: makeMemoryRateLimitStore(), keys: (key: string) => key.startsWith("strict:") }
      yield* Effect.gen(function*() {
        const s = yield* RateLimitStore
        const counted = []
        for (let i = 0; i < 3; i++) counted.push((yield* s.hit("strict:k", WINDOW_MS, T0 + i)).count)
        expect(counted).toEqual([1, 2, 3])
        for (let i = 0; i < 3; i++) expect(yield* s.hit("loose:k", WINDOW_MS, T0)).toEqual({ count: 1, reset_ms: T0 + WINDOW_MS })
      }).pipe(
        Effect.provide(RedisRateLimitStoreLive({ url: `redis://127.0.0.1:${port}`, prefix, connectTimeoutMs: 200, fallback })),
        Effect.provide(captureLogs().logger)
      )
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

/** Kills the redis-server on `port` and waits for it to be gone. */
const stopRedis = (port: number) =>
  new Promise<void>((resolve) => {
    const child = running.get(port)
    if (child === undefined || child.exitCode !== null || child.signalCode !== null) return resolve()
    child.once("exit", () => resolve())
    child.kill("SIGKILL")
  })

afterAll(async () => {
  await Promise.all([...running.keys()].map(stopRedis))
})

/**
 * A TCP relay to `target` that can hold every byte in both directions while connections
 * stay open: a Redis that stops answering without closing anything (a network partition).
 */
const freezableProxy = (target: number) =>
  new Promise<{ readonly port: number; freeze(): void; thaw(): void; close(): Promise<void> }>((resolve, reject) => {
    let frozen = false
    const held: Array<() => void> = []
    const sockets = new Set<Socket>()
    const relay = (from: Socket, to: Socket) =>
      from.on("data", (chunk) => {
        if (frozen) held.push(() => to.write(chunk))
        else to.write(chunk)
      })
    const server = createServer((client) => {
      const upstream = connect(target, "127.0.0.1")
      for (const [a, b] of [[client, upstream], [upstream, client]] as const) {
        sockets.add(a)
        relay(a, b)
        a.on("error", () => b.destroy())
        a.on("close", () => b.destroy())
      }
    })
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () =>
      resolve({
        port: (server.address() as { port: number }).port,
        freeze: () => {
          frozen = true
        },
        thaw: () => {
          frozen = false
          for (const send of held.splice(0)) send()
        },
        close: () =>
          new Promise<void>((done) => {
            for (const socket of sockets) socket.destroy()
            server.close(() => done())
          })
      }))
  })
