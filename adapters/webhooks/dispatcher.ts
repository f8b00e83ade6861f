/**
 * The webhook dispatcher: a background fiber that turns committed events into deliveries,
 * claims due deliveries, sends them signed (Standard Webhooks) with the HTTP transport and
 * records the outcomes. The rules (what an outcome means, when to retry) are the core's
 * (`WebhookOutbox`, src/webhooks/retrySchedule.ts); this module only moves bytes and time.
 *
 * Flow. A commit in this process wakes the loop at once (Events' in-process listeners);
 * so does one of another process on the same database when storage has signals
 * (PostgreSQL's LISTEN/NOTIFY); polling (`pollIntervalMs`) finds the rest (SQLite, a lost
 * signal). Rounds start at least `roundIntervalMs` apart, so a stream of commits is taken up
 * a few at a time rather than with a round each (`idleRoundIntervalMs` after a round that
 * found no endpoint active anywhere and nothing due). Every process on a database dispatches; each due delivery is leased by one.
 * The loop fans events out — claiming the new deliveries in the same transaction, so a
 * delivery is sent right after its event commits — then claims whatever else is due, up to
 * `concurrency` in flight (`perEndpointConcurrency` per endpoint, so one slow receiver
 * cannot hold every slot). Each attempt runs in its own fiber; outcomes are written in
 * batches by one writer fiber, which keeps storage transactions few under load.
 *
 * Time. Due times, leases and backoff follow Effect's `Clock` (a controlled clock in tests
 * drives the retry schedule); the HTTP timeout and the `webhook-timestamp` header are real
 * time, since the receiver checks the timestamp against its own clock.
 *
 * Shutdown (the layer's scope closes): no new claims; attempts in flight finish (each
 * within the timeout) and their outcomes are written. Anything interrupted harder stays
 * leased in the database and is sent again after the lease ends.
 */
import { Clock, Duration, Effect, Fiber, FiberSet, Layer, Option, Queue } from "effect"
import { Events } from "../../src/events/Events.js"
import { Storage } from "../../src/ports/storage.js"
import type { AttemptResult } from "../../src/webhooks/retrySchedule.js"
import { type AttemptRecord, type ClaimedDelivery, endpointKey, WebhookOutbox } from "../../src/webhooks/Outbox.js"
import type { Resolver } from "./guard.js"
import { signedHeaders } from "./signing.js"
import { makeHttpTransport, type Transport } from "./transport.js"

export interface WebhookDispatcherOptions {
  /** Deliver to private, loopback and link-local addresses (`--allow-private-webhooks`; tests). */
  readonly allowPrivate?: boolean
  /** An attempt that has not completed within this is a failure (default 10 000 ms). */
  readonly timeoutMs?: number
  /** Attempts in flight at once (default 128). */
  readonly concurrency?: number
  /** Attempts in flight per endpoint (default 32). */
  readonly perEndpointConcurrency?: number
  /** How long a claim holds a delivery before another process may take it (default timeout + 20 s). */
  readonly leaseMs?: number
  /** How often to look for work committed by other processes (default 1000 ms). */
  readonly pollIntervalMs?: number
  /**
   * The least real time between the starts of two rounds (default 10 ms). A commit wakes the
   * loop at once unless a round started less than this ago; then the next round starts when
   * this has passed and takes up every commit since. Under a stream of commits (a busy
   * server commits a group every few ms) that is one round per interval instead of one per
   * commit, each round costing a few reads and a timer whatever it finds.
   */
  readonly roundIntervalMs?: number
  /**
   * The least real time between the starts of two rounds after one that found no active
   * endpoint anywhere and nothing due (default 100 ms). A server nobody has subscribed to
   * still commits events; each round would read the log's end, the cursor, the endpoints and
   * the queue to find nothing. The first event after an endpoint is created waits at most
   * this long; with an endpoint active, rounds keep `roundIntervalMs`.
   */
  readonly idleRoundIntervalMs?: number
  /** Hostname resolution for connections (default: the system resolver). */
  readonly resolver?: Resolver
  /** Replaces the HTTP transport (tests). */
  readonly transport?: Transport
  /** Real time in ms for `webhook-timestamp` (default `Date.now`). */
  readonly now?: () => number
}

/** What a running dispatcher has done, for benchmarks and health checks. */
export interface DispatcherStats {
  readonly attempts: number
  readonly inFlight: number
  readonly errors: number
}

const realSleep = (ms: number) => Effect.promise(() => new Promise<void>((resolve) => setTimeout(resolve, ms)))

/**
 * Waits for the event loop's next check phase. Fibers resumed by an HTTP response run in
 * that callback's microtasks, before Node parses the next socket's data; without this, a
 * storage transaction would run for every single response. After it, every response that
 * had arrived has been handled, so one write (and one claim) covers them all.
 */
const nextMacrotask = Effect.async<void>((resume) => {
  const handle = setImmediate(() => resume(Effect.void))
  return Effect.sync(() => clearImmediate(handle))
})

/** Starts the dispatcher in the current scope; it stops (draining in-flight attempts) when the scope closes. */
export const makeDispatcher = (options: WebhookDispatcherOptions = {}) =>
  Effect.gen(function*() {
    const outbox = yield* WebhookOutbox
    const events = yield* Events
    const timeoutMs = options.timeoutMs ?? 10_000
    const concurrency = Math.max(1, options.concurrency ?? 128)
    const perEndpoint = Math.max(1, options.perEndpointConcurrency ?? 32)
    const leaseMs = options.leaseMs ?? timeoutMs + 20_000
    const pollMs = options.pollIntervalMs ?? 1000
    const roundIntervalMs = Math.max(0, options.roundIntervalMs ?? 10)
    const idleRoundIntervalMs = Math.max(roundIntervalMs, options.idleRoundIntervalMs ?? 100)
    const realNow = options.now ?? Date.now
    const transport = options.transport ??
      makeHttpTransport({
        timeoutMs,
        allowPrivate: options.allowPrivate ?? false,
        maxSockets: perEndpoint,
        ...(options.resolver !== undefined ? { resolver: options.resolver } : {})
      })
    if (options.transport === undefined) yield* Effect.addFinalizer(() => Effect.sync(() => transport.close()))

    const stats = { attempts: 0, errors: 0 }
    /** Delivery id → endpoint key, for every HTTP attempt in flight here. */
    const inFlight = new Map<string, string>()
    const perEndpointCount = new Map<string, number>()
    /** Attempts that finished but whose outcome is not written yet: never claimed again meanwhile. */
    const unrecorded = new Set<string>()
    let stopping = false

    const wake = yield* Queue.sliding<void>(1)
    const poke = () => {
      Queue.unsafeOffer(wake, undefined)
    }
    const offEvents = events.subscribe(poke)
    const offWork = outbox.onWork(poke)
    // Other processes' commits, when storage signals them (an optional capability).
    const signals = Option.flatMap(yield* Effect.serviceOption(Storage), (s) => Option.fromNullable(s.signals))
    const offSignals = Option.match(signals, { onNone: () => () => {}, onSome: (s) => s.subscribe("events", poke) })
    yield* Effect.addFinalizer(() =>
      Effect.sync(() => {
        offEvents()
        offWork()
        offSignals()
      })
    )

    const outcomes = yield* Queue.unbounded<AttemptRecord>()
    const attempts = yield* FiberSet.make<void, never>()

    const track = (claim: ClaimedDelivery) => {
      const key = endpointKey(claim.tenant, claim.webhook_id)
      inFlight.set(claim.delivery_id, key)
      perEndpointCount.set(key, (perEndpointCount.get(key) ?? 0) + 1)
    }
    /** The attempt's slot is free again (its outcome may still be unwritten). */
    const release = (claim: ClaimedDelivery) => {
      const key = inFlight.get(claim.delivery_id)
      if (key === undefined) return
      inFlight.delete(claim.delivery_id)
      const n = (perEndpointCount.get(key) ?? 1) - 1
      if (n <= 0) perEndpointCount.delete(key)
      else perEndpointCount.set(key, n)
    }

    const attempt = (claim: ClaimedDelivery) =>
      Effect.gen(function*() {
        const started = yield* Clock.currentTimeMillis
        const result = yield* Effect.suspend(() => {
          const headers = signedHeaders(claim.secrets, claim.event_id, Math.floor(realNow() / 1000), claim.payload)
          return Effect.promise(() => transport.send({ url: claim.url, headers, body: claim.payload }))
        }).pipe(
          // A bug in signing or the transport is a failed attempt like any other, never a lost slot.
          Effect.catchAllDefect((defect): Effect.Effect<AttemptResult> =>
            Effect.succeed({ _tag: "Error", error: `delivery failed: ${String(defect)}`, latency_ms: 0 })
          )
        )
        stats.attempts++
        unrecorded.add(claim.delivery_id)
        release(claim)
        // No wake-up here: the writer wakes the loop after each batch it writes, so slots
        // freed meanwhile are refilled by one claim, not one claim per finished attempt.
        yield* Queue.offer(outcomes, { claim, result, started_ms: started })
      })

    const launch = (claimed: ReadonlyArray<ClaimedDelivery>) =>
      Effect.forEach(claimed, (claim) => {
        track(claim)
        return FiberSet.run(attempts, attempt(claim))
      }, { discard: true })

    const free = () => concurrency - inFlight.size
    const claimOptions = (max: number) => ({
      max,
      leaseMs,
      perEndpoint,
      inFlight: perEndpointCount,
      exclude: new Set([...inFlight.keys(), ...unrecorded])
    })

    /** Whether the last round found no active endpoint and nothing due: the next one waits `idleRoundIntervalMs`. */
    let idle = false

    /** One round: fan out everything new, claim what is due; returns how long to wait at most. */
    const round = Effect.gen(function*() {
      let unheard: boolean
      for (;;) {
        const fanned = yield* outbox.fanOut({ claim: claimOptions(Math.max(0, free())) })
        unheard = fanned.unheard
        yield* launch(fanned.claimed)
        if (!fanned.more) break
      }
      if (free() <= 0) return pollMs
      const due = yield* outbox.claimDue(claimOptions(free()))
      idle = unheard && due.claimed.length === 0
      yield* launch(due.claimed)
      // Rows left due now (`saturated`) wait for a slot: the writer wakes the loop when
      // attempts finish. Otherwise sleep until the next row falls due (a retry, a lease's end).
      if (due.next_due_ms === null) return pollMs
      const now = yield* Clock.currentTimeMillis
      return Math.max(1, Math.min(pollMs, due.next_due_ms - now))
    })

    /** When the last round started (`performance.now()`, real time like the interval). */
    let lastRoundAt = Number.NEGATIVE_INFINITY
    const loop = Effect.gen(function*() {
      while (!stopping) {
        const early = lastRoundAt + (idle ? idleRoundIntervalMs : roundIntervalMs) - performance.now()
        if (early > 0) yield* realSleep(early)
        lastRoundAt = performance.now()
        idle = false
        const waitMs = yield* round.pipe(
          Effect.catchAllCause((cause) =>
            Effect.zipRight(
              Effect.sync(() => stats.errors++),
              Effect.as(Effect.logError("slotwise webhooks: dispatch round failed", cause), pollMs)
            )
          )
        )
        // A wake-up that came during the round is still queued (one at most): it ends the
        // wait at once, so a commit racing the round is never left for the poll.
        if (waitMs > 0) yield* Effect.race(Queue.take(wake), Effect.sleep(Duration.millis(waitMs)))
        yield* nextMacrotask
      }
    })

    const writer = Effect.gen(function*() {
      for (;;) {
        const first = yield* Queue.take(outcomes)
        yield* nextMacrotask
        const records = [first, ...(yield* Queue.takeUpTo(outcomes, 999))]
        yield* outbox.recordAttempts(records).pipe(
          Effect.catchAllCause((cause) =>
            // The leases stay in the database: those deliveries are sent again when they end.
            Effect.zipRight(Effect.sync(() => stats.errors++), Effect.logError("slotwise webhooks: recording attempts failed", cause))
          )
        )
        for (const record of records) unrecorded.delete(record.claim.delivery_id)
        poke()
      }
    })

    const writerFiber = yield* Effect.forkDaemon(writer)
    const loopFiber = yield* Effect.forkDaemon(loop)

    yield* Effect.addFinalizer(() =>
      Effect.gen(function*() {
        stopping = true
        yield* Fiber.interrupt(loopFiber)
        // Let attempts in flight finish (each is bounded by the timeout), then their writes.
        const deadline = Date.now() + timeoutMs + 2000
        while ((inFlight.size > 0 || unrecorded.size > 0) && Date.now() < deadline) yield* realSleep(5)
        yield* Fiber.interrupt(writerFiber)
      })
    )

    return {
      stats: (): DispatcherStats => ({ attempts: stats.attempts, inFlight: inFlight.size, errors: stats.errors })
    }
  })

/** The dispatcher as a layer: runs while the layer lives (needs `WebhookOutbox` and `Events`). */
export const WebhookDispatcherLive = (
  options: WebhookDispatcherOptions = {}
): Layer.Layer<never, never, WebhookOutbox | Events> => Layer.scopedDiscard(makeDispatcher(options))
