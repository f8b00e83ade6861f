/**
 * What one attempt's outcome does to the stored records: the delivery (status, attempt
 * log, next due time), its queue row (rescheduled, or gone when the delivery is final) and
 * its endpoint's health. The retry schedule decides; this applies the verdict. Pure: the
 * outbox reads the records and writes what comes back.
 */
import { formatInstant } from "../domain/common.js"
import {
  MAX_RECORDED_ATTEMPTS,
  type QueuedDelivery,
  type StoredWebhookDelivery,
  type StoredWebhookEndpoint,
  type WebhookError
} from "./webhook.js"
import { type AttemptResult, decide, describeResult } from "./retrySchedule.js"

export type EndpointHealth =
  | { readonly _tag: "ok" }
  | { readonly _tag: "failing"; readonly error: WebhookError }
  /** 410 Gone: the endpoint is disabled. */
  | { readonly _tag: "gone"; readonly error: WebhookError }

export interface AttemptOutcome {
  readonly delivery: StoredWebhookDelivery
  /** The queue row from now on, or null when the delivery is final (the row goes). */
  readonly row: QueuedDelivery | null
  readonly health: EndpointHealth
}

export const applyAttempt = (input: {
  readonly delivery: StoredWebhookDelivery
  readonly row: QueuedDelivery
  readonly result: AttemptResult
  /** Clock time the attempt started (its `attempted_at`). */
  readonly startedMs: number
  readonly nowMs: number
  /** Uniform in [0, 1), for the jitter. */
  readonly random: number
}): AttemptOutcome => {
  const { delivery, result, row } = input
  const attemptsInRound = row.manual ? 1 : row.round_attempts + 1
  const verdict = decide({ result, attemptsInRound, manual: row.manual, nowMs: input.nowMs, random: input.random })
  const error = verdict._tag === "Gone" ? "HTTP 410 Gone: endpoint disabled" : describeResult(result)
  const statusCode = result._tag === "Response" ? result.status : null
  const attemptedAt = formatInstant(input.startedMs)
  const nextDue = verdict._tag === "Retry" ? input.nowMs + verdict.delay_ms : null
  const report: WebhookError = { message: error ?? "", status_code: statusCode, delivery_id: delivery.id, at: attemptedAt }
  return {
    delivery: {
      ...delivery,
      status: verdict._tag === "Succeeded" ? "succeeded" : verdict._tag === "Retry" ? "pending" : "failed",
      attempt_count: delivery.attempt_count + 1,
      next_attempt_at: nextDue === null ? null : formatInstant(nextDue),
      last_error: error,
      attempts: [...delivery.attempts, {
        attempted_at: attemptedAt,
        status_code: statusCode,
        latency_ms: Math.max(0, Math.round(result.latency_ms)),
        error,
        trigger: row.manual ? "manual" as const : "automatic" as const
      }].slice(-MAX_RECORDED_ATTEMPTS),
      updated_at: formatInstant(input.nowMs)
    },
    row: nextDue === null ? null : { ...row, due_ms: nextDue, lease: null, round_attempts: attemptsInRound },
    health: verdict._tag === "Succeeded"
      ? { _tag: "ok" }
      : verdict._tag === "Gone"
      ? { _tag: "gone", error: report }
      : { _tag: "failing", error: report }
  }
}

/** The health an endpoint ends a batch with: the latest outcome, except that Gone stays. */
export const laterHealth = (previous: EndpointHealth | undefined, next: EndpointHealth): EndpointHealth =>
  previous?._tag === "gone" ? previous : next

/** The endpoint with `health` applied, or undefined when that changes nothing. */
export const withHealth = (endpoint: StoredWebhookEndpoint, health: EndpointHealth): StoredWebhookEndpoint | undefined => {
  switch (health._tag) {
    case "ok":
      return endpoint.status === "failing" ? { ...endpoint, status: "enabled" } : undefined
    case "failing":
      return { ...endpoint, status: endpoint.active ? "failing" : "disabled", last_error: health.error }
    case "gone":
      return { ...endpoint, active: false, status: "disabled", last_error: health.error }
  }
}
