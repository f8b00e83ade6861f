/**
 * The retry schedule (src/webhooks/retrySchedule.ts) on its own: what each outcome means,
 * the waits between attempts with their jitter (the random draw is an input, so its bounds
 * are tested exactly), Retry-After, and the point where a delivery gives up; then the same
 * rules through the outbox, with Effect's `Random` replaced and `TestClock` as the clock.
 */
import { describe, expect, it } from "@effect/vitest"
import * as fc from "fast-check"
import { Effect, Layer, Random, TestClock } from "effect"
import { MemoryStorageLive } from "../../adapters/memory/storage.js"
import { CoreLive } from "../../src/layers.js"
import { Tenant } from "../../src/ports/tenant.js"
import { Webhooks } from "../../src/webhooks/Webhooks.js"
import { type AttemptRecord, WebhookOutbox } from "../../src/webhooks/Outbox.js"
import {
  type AttemptResult,
  decide,
  describeResult,
  isSuccess,
  JITTER,
  MAX_ATTEMPTS,
  MAX_RETRY_AFTER_MS,
  parseRetryAfter,
  RETRY_DELAYS_MS
} from "../../src/webhooks/retrySchedule.js"

const SECOND = 1000
const MINUTE = 60 * SECOND
const HOUR = 60 * MINUTE
const NOW = Date.parse("2027-03-29T08:00:00Z")

const response = (status: number, extra: Partial<Extract<AttemptResult, { _tag: "Response" }>> = {}): AttemptResult => ({
  _tag: "Response",
  status,
  latency_ms: 12,
  ...extra
})
const failure = (error = "connection refused"): AttemptResult => ({ _tag: "Error", error, latency_ms: 3 })

/** An automatic attempt's verdict with the jitter's draw in the middle (no jitter). */
const after = (result: AttemptResult, attemptsInRound: number, random = 0.5) =>
  decide({ result, attemptsInRound, manual: false, nowMs: NOW, random })

describe("outcomes", () => {
  it("only 2xx is success", () => {
    for (const status of [200, 201, 204, 299]) expect(isSuccess(response(status))).toBe(true)
    for (const status of [100, 199, 300, 302, 304, 400, 404, 429, 500, 503]) expect(isSuccess(response(status))).toBe(false)
    expect(isSuccess(failure())).toBe(false)
    expect(after(response(204), 1)).toEqual({ _tag: "Succeeded" })
    expect(after(response(199), 1)._tag).toBe("Retry")
  })

  it("410 Gone ends the delivery and disables the endpoint, whatever the attempt", () => {
    expect(after(response(410), 1)).toEqual({ _tag: "Gone" })
    expect(after(response(410), MAX_ATTEMPTS)).toEqual({ _tag: "Gone" })
    expect(decide({ result: response(410), attemptsInRound: 1, manual: true, nowMs: NOW, random: 0 })).toEqual({ _tag: "Gone" })
  })

  it("a manual attempt is one attempt: it succeeds or fails, never schedules more", () => {
    const manual = (result: AttemptResult) => decide({ result, attemptsInRound: 1, manual: true, nowMs: NOW, random: 0.5 })
    expect(manual(response(200))).toEqual({ _tag: "Succeeded" })
    expect(manual(response(500))).toEqual({ _tag: "Failed" })
    expect(manual(response(429, { retry_after: "5" }))).toEqual({ _tag: "Failed" })
    expect(manual(failure())).toEqual({ _tag: "Failed" })
  })

  it("the error text an attempt leaves", () => {
    expect(describeResult(response(200))).toBeNull()
    expect(describeResult(response(500))).toBe("HTTP 500")
    expect(describeResult(response(500, { body_excerpt: "boom" }))).toBe("HTTP 500: boom")
    expect(describeResult(response(500, { body_excerpt: "" }))).toBe("HTTP 500")
    expect(describeResult(response(301, { body_excerpt: "moved" }))).toBe("HTTP 301 (redirects are not followed): moved")
    expect(describeResult(failure("timed out after 10000 ms"))).toBe("timed out after 10000 ms")
  })
})

describe("the schedule", () => {
  it("is docs/api.md's: about 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h; eight attempts in all", () => {
    expect(RETRY_DELAYS_MS).toEqual([5 * SECOND, 5 * MINUTE, 30 * MINUTE, 2 * HOUR, 5 * HOUR, 10 * HOUR, 10 * HOUR])
    expect(MAX_ATTEMPTS).toBe(8)
    expect(JITTER).toBe(0.1)
  })

  it("the wait after the nth failed attempt is the nth delay (a draw of 0.5 adds no jitter)", () => {
    for (const [i, delay] of RETRY_DELAYS_MS.entries()) {
      expect(after(response(500), i + 1)).toEqual({ _tag: "Retry", delay_ms: delay })
      expect(after(failure(), i + 1)).toEqual({ _tag: "Retry", delay_ms: delay })
    }
  })

  it("gives up after the eighth attempt, and only then", () => {
    expect(after(response(500), MAX_ATTEMPTS - 1)).toEqual({ _tag: "Retry", delay_ms: 10 * HOUR })
    expect(after(response(500), MAX_ATTEMPTS)).toEqual({ _tag: "Failed" })
    expect(after(response(500), MAX_ATTEMPTS + 3)).toEqual({ _tag: "Failed" })
    expect(after(response(429, { retry_after: "5" }), MAX_ATTEMPTS)).toEqual({ _tag: "Failed" })
    // A success on the last attempt is still a success.
    expect(after(response(200), MAX_ATTEMPTS)).toEqual({ _tag: "Succeeded" })
  })

  it("jitter: the lowest and highest draws give ±10 %", () => {
    expect(after(response(500), 1, 0)).toEqual({ _tag: "Retry", delay_ms: 4500 })
    expect(after(response(500), 2, 0)).toEqual({ _tag: "Retry", delay_ms: 270 * SECOND })
    // The draw is in [0, 1): the top of the range is approached, never reached.
    const top = after(response(500), 1, 1 - Number.EPSILON)
    expect(top).toEqual({ _tag: "Retry", delay_ms: 5500 })
    expect(after(response(500), 7, 0.75)).toEqual({ _tag: "Retry", delay_ms: 10 * HOUR * 1.05 })
  })

  it("jitter stays within ±10 % of the delay for every attempt and draw", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: MAX_ATTEMPTS - 1 }),
        fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
        (n, random) => {
          const verdict = after(response(503), n, random)
          const base = RETRY_DELAYS_MS[n - 1]!
          expect(verdict._tag).toBe("Retry")
          const delay = (verdict as { delay_ms: number }).delay_ms
          expect(Number.isInteger(delay)).toBe(true)
          expect(delay).toBeGreaterThanOrEqual(Math.floor(base * (1 - JITTER)))
          expect(delay).toBeLessThanOrEqual(Math.ceil(base * (1 + JITTER)))
        }
      )
    )
  })
})

describe("429 and Retry-After", () => {
  it("waits exactly Retry-After seconds (no jitter), at least 1 s, at most 10 h", () => {
    expect(after(response(429, { retry_after: "7" }), 1, 0)).toEqual({ _tag: "Retry", delay_ms: 7000 })
    expect(after(response(429, { retry_after: "7" }), 1, 0.99)).toEqual({ _tag: "Retry", delay_ms: 7000 })
    expect(after(response(429, { retry_after: "0" }), 1)).toEqual({ _tag: "Retry", delay_ms: 1000 })
    expect(after(response(429, { retry_after: "999999" }), 1)).toEqual({ _tag: "Retry", delay_ms: MAX_RETRY_AFTER_MS })
  })

  it("an HTTP date counts from now; a past one means the 1 s floor", () => {
    expect(after(response(429, { retry_after: "Mon, 29 Mar 2027 08:02:00 GMT" }), 1)).toEqual({ _tag: "Retry", delay_ms: 2 * MINUTE })
    expect(after(response(429, { retry_after: "Mon, 29 Mar 2027 07:00:00 GMT" }), 1)).toEqual({ _tag: "Retry", delay_ms: 1000 })
  })

  it("without a usable Retry-After, 429 follows the schedule", () => {
    expect(after(response(429), 3)).toEqual({ _tag: "Retry", delay_ms: 30 * MINUTE })
    for (const junk of ["soon", "-5", "7.5", "1e3", "", "0x10"]) {
      expect(after(response(429, { retry_after: junk }), 4)).toEqual({ _tag: "Retry", delay_ms: 2 * HOUR })
    }
  })

  it("parseRetryAfter: delta seconds or the HTTP-date forms, nothing else", () => {
    expect(parseRetryAfter(undefined, NOW)).toBeUndefined()
    expect(parseRetryAfter(" 120 ", NOW)).toBe(120 * SECOND)
    expect(parseRetryAfter("Monday, 29-Mar-27 08:00:30 GMT", NOW)).toBe(30 * SECOND)
    expect(parseRetryAfter("Mon Mar 29 08:00:45 2027", NOW)).toBeDefined()
    for (const junk of ["-5", "7.5", "1e3", "tomorrow", "2027-03-29T09:00:00Z"]) expect(parseRetryAfter(junk, NOW)).toBeUndefined()
  })
})

describe("through the outbox", () => {
  const tenant = { account_id: `acc_${"5".repeat(26)}`, environment: "sandbox" } as const
  const core = CoreLive.pipe(Layer.provide(MemoryStorageLive))

  /** One failed attempt per round for a fresh delivery, each recorded when its row falls due. */
  const failEveryAttempt = (rounds: number) =>
    Effect.gen(function*() {
      const webhooks = yield* Webhooks
      const outbox = yield* WebhookOutbox
      yield* TestClock.setTime(NOW)
      const endpoint = yield* webhooks.create({ url: "https://hooks.example.com/slotwise", events: ["*"] })
      yield* webhooks.sendTest(endpoint.id)
      const waits: Array<number> = []
      for (let round = 0; round < rounds; round++) {
        const { claimed, next_due_ms } = yield* outbox.claimDue({ max: 10, leaseMs: 60_000 })
        expect(next_due_ms).toBeNull()
        expect(claimed).toHaveLength(1)
        const started = yield* TestClock.currentTimeMillis
        const record: AttemptRecord = { claim: claimed[0]!, result: response(500), started_ms: started }
        yield* outbox.recordAttempts([record])
        const [delivery] = (yield* webhooks.listDeliveries(endpoint.id)).data
        if (delivery!.next_attempt_at === null) {
          expect(delivery).toMatchObject({ status: "failed", attempt_count: MAX_ATTEMPTS })
          break
        }
        const due = Date.parse(delivery!.next_attempt_at)
        waits.push(due - started)
        // Not a moment early: one millisecond before it falls due, nothing is claimed.
        yield* TestClock.adjust(due - started - 1)
        expect((yield* outbox.claimDue({ max: 10, leaseMs: 60_000 })).claimed).toHaveLength(0)
        yield* TestClock.adjust(1)
      }
      return waits
    }).pipe(Effect.provideService(Tenant, tenant), Effect.provide(core))

  it.effect("the injected random source sets the jitter: the lowest draw takes 10 % off every wait; then failed", () =>
    Effect.gen(function*() {
      const waits = yield* Effect.withRandom(failEveryAttempt(MAX_ATTEMPTS), Random.fixed([0]))
      expect(waits).toEqual(RETRY_DELAYS_MS.map((d) => Math.round(d * (1 - JITTER))))
    }))

  it.effect("draws in turn: lowest, middle, near the top", () =>
    Effect.gen(function*() {
      const top = 1 - 2 ** -20
      const waits = yield* Effect.withRandom(failEveryAttempt(3), Random.fixed([0, 0.5, top]))
      const [first, second, third] = RETRY_DELAYS_MS
      expect(waits).toEqual([Math.round(first! * 0.9), second!, Math.round(third! * (0.9 + 0.2 * top))])
      expect(waits[2]).toBeGreaterThan(third! * 1.0999)
    }))
})
