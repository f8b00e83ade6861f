/**
 * The pure pieces the outbox relies on: what an attempt's outcome does to the stored
 * delivery, its queue row and the endpoint's health (src/webhooks/attempts.ts), and the id
 * floor `recover` scans deliveries from (src/domain/ids.ts).
 */
import * as fc from "fast-check"
import { describe, expect, it } from "vitest"
import { idFloor, makeId } from "../../src/domain/ids.js"
import type { QueuedDelivery, StoredWebhookDelivery, StoredWebhookEndpoint } from "../../src/webhooks/webhook.js"
import { MAX_RECORDED_ATTEMPTS } from "../../src/webhooks/webhook.js"
import { applyAttempt, laterHealth, withHealth } from "../../src/webhooks/attempts.js"
import { type AttemptResult, MAX_ATTEMPTS, RETRY_DELAYS_MS } from "../../src/webhooks/retrySchedule.js"

const NOW = Date.parse("2027-03-29T08:00:00Z")
const iso = (ms: number) => new Date(ms).toISOString().replace(".000Z", "Z")

const delivery: StoredWebhookDelivery = {
  id: "whd_01JQ0000000000000000000000",
  object: "webhook_delivery",
  webhook_id: "whk_01JQ0000000000000000000000",
  event_id: "evt_01JQ0000000000000000000000",
  event_type: "client.created",
  status: "pending",
  attempt_count: 0,
  next_attempt_at: iso(NOW - 1000),
  last_error: null,
  attempts: [],
  created_at: iso(NOW - 1000),
  updated_at: iso(NOW - 1000),
  payload: "{}"
}
const row: QueuedDelivery = {
  id: delivery.id,
  webhook_id: delivery.webhook_id,
  event_id: delivery.event_id,
  due_ms: NOW + 30_000,
  lease: "lease-1",
  round_attempts: 0,
  manual: false
}
const ok: AttemptResult = { _tag: "Response", status: 200, latency_ms: 12.6 }
const error500: AttemptResult = { _tag: "Response", status: 500, latency_ms: 40, body_excerpt: "boom" }
const gone: AttemptResult = { _tag: "Response", status: 410, latency_ms: 5 }

const apply = (result: AttemptResult, overrides: { delivery?: Partial<StoredWebhookDelivery>; row?: Partial<QueuedDelivery> } = {}) =>
  applyAttempt({
    delivery: { ...delivery, ...overrides.delivery },
    row: { ...row, ...overrides.row },
    result,
    startedMs: NOW - 200,
    nowMs: NOW,
    random: 0.5
  })

describe("applying an attempt", () => {
  it("success: succeeded, the row goes, the attempt is logged as it happened", () => {
    const outcome = apply(ok)
    expect(outcome.row).toBeNull()
    expect(outcome.health).toEqual({ _tag: "ok" })
    expect(outcome.delivery).toMatchObject({
      status: "succeeded",
      attempt_count: 1,
      next_attempt_at: null,
      last_error: null,
      updated_at: iso(NOW)
    })
    expect(outcome.delivery.attempts).toEqual([
      { attempted_at: iso(NOW - 200), status_code: 200, latency_ms: 13, error: null, trigger: "automatic" }
    ])
  })

  it("a failure on the schedule: pending, due after the delay, the lease released, the round counted", () => {
    const outcome = apply(error500, { row: { round_attempts: 2 } })
    expect(outcome.row).toEqual({ ...row, due_ms: NOW + RETRY_DELAYS_MS[2]!, lease: null, round_attempts: 3 })
    expect(outcome.delivery).toMatchObject({
      status: "pending",
      next_attempt_at: iso(NOW + RETRY_DELAYS_MS[2]!),
      last_error: "HTTP 500: boom"
    })
    expect(outcome.health).toEqual({
      _tag: "failing",
      error: { message: "HTTP 500: boom", status_code: 500, delivery_id: delivery.id, at: iso(NOW - 200) }
    })
  })

  it("the last attempt of a round fails the delivery; a manual attempt never reschedules", () => {
    expect(apply(error500, { row: { round_attempts: MAX_ATTEMPTS - 1 } })).toMatchObject({ row: null, delivery: { status: "failed" } })
    const manual = apply(error500, { row: { manual: true, round_attempts: 0 } })
    expect(manual).toMatchObject({ row: null, delivery: { status: "failed", attempt_count: 1 } })
    expect(manual.delivery.attempts[0]!.trigger).toBe("manual")
  })

  it("410: failed, and the endpoint is to be disabled", () => {
    const outcome = apply(gone)
    expect(outcome).toMatchObject({ row: null, delivery: { status: "failed", last_error: "HTTP 410 Gone: endpoint disabled" } })
    expect(outcome.health).toMatchObject({ _tag: "gone", error: { status_code: 410 } })
  })

  it("keeps only the latest attempts", () => {
    const old = Array.from({ length: MAX_RECORDED_ATTEMPTS }, (_, i) => ({
      attempted_at: iso(NOW - 100_000 + i),
      status_code: 500,
      latency_ms: i,
      error: "HTTP 500",
      trigger: "automatic" as const
    }))
    const outcome = apply(ok, { delivery: { attempts: old, attempt_count: 40 } })
    expect(outcome.delivery.attempts).toHaveLength(MAX_RECORDED_ATTEMPTS)
    expect(outcome.delivery.attempts[0]).toEqual(old[1])
    expect(outcome.delivery.attempts.at(-1)!.status_code).toBe(200)
    expect(outcome.delivery.attempt_count).toBe(41)
  })
})

describe("endpoint health", () => {
  const endpoint = { id: "whk_1", active: true, status: "enabled", last_error: null } as unknown as StoredWebhookEndpoint
  const failing = apply(error500).health
  const goneHealth = apply(gone).health

  it("failing marks an active endpoint failing with the error; success brings it back to enabled", () => {
    const failed = withHealth(endpoint, failing)!
    expect(failed).toMatchObject({ status: "failing", active: true, last_error: { message: "HTTP 500: boom" } })
    expect(withHealth(failed, { _tag: "ok" })).toMatchObject({ status: "enabled" })
    expect(withHealth(endpoint, { _tag: "ok" })).toBeUndefined() // nothing to change
    // An endpoint disabled meanwhile stays disabled, with the error on record.
    expect(withHealth({ ...endpoint, active: false, status: "disabled" }, failing)).toMatchObject({ status: "disabled" })
  })

  it("Gone disables the endpoint and outranks any later outcome in the same batch", () => {
    expect(withHealth(endpoint, goneHealth)).toMatchObject({ active: false, status: "disabled", last_error: { status_code: 410 } })
    expect(laterHealth(goneHealth, { _tag: "ok" })).toBe(goneHealth)
    expect(laterHealth(failing, { _tag: "ok" })).toEqual({ _tag: "ok" })
    expect(laterHealth(undefined, failing)).toBe(failing)
  })
})

describe("idFloor", () => {
  it("sorts at or below every id made at that millisecond and above every earlier one", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 2 ** 48 - 1 }), (ms) => {
        const floor = idFloor("delivery", ms)
        expect(floor <= makeId("delivery", ms)).toBe(true)
        expect(floor > makeId("delivery", ms - 1)).toBe(true)
        expect(floor).toMatch(/^whd_[0-9A-HJKMNP-TV-Z]{10}0{16}$/)
      })
    )
  })
})
