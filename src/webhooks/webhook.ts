/**
 * Webhook endpoints and their deliveries (docs/api.md §4). The endpoint's signing secrets never
 * leave storage except once, in the response that created or rotated them; a delivery keeps
 * each attempt's status code, latency and error.
 */
import { Schema } from "effect"
import { EVENT_TYPES } from "../events/catalogue.js"
import { Instant, Metadata, ObjectType, optional, optionalFields, Text, Timestamps } from "../domain/common.js"
import { Id } from "../domain/ids.js"

/** The event a `POST /v1/webhooks/{id}/test` sends; never recorded in the feed. */
export const WEBHOOK_TEST_EVENT = "webhook.test"

/** A webhook URL: syntax only; the address rules are `checkWebhookUrl` (src/webhooks/address.ts). */
export const WebhookUrl = Schema.String.pipe(
  Schema.maxLength(2048),
  Schema.filter((text) => {
    let url: URL
    try {
      url = new URL(text)
    } catch {
      return "must be an absolute http(s) URL"
    }
    if (url.protocol !== "https:" && url.protocol !== "http:") return "must use https or http"
    if (url.username !== "" || url.password !== "") return "must not carry credentials"
    if (url.hostname === "") return "must name a host"
    return true
  }),
  Schema.annotations({
    identifier: "WebhookUrl",
    description: "absolute `https` (or `http`) URL the events are posted to",
    jsonSchema: { format: "uri" }
  })
)

export const WebhookEventSelector = Schema.Literal("*", ...EVENT_TYPES).annotations({
  description: "an event type of the catalogue, or `*` for every type",
  message: () => ({ message: "must be an event type of the catalogue or \"*\"", override: true })
})

export const WebhookEvents = Schema.Array(WebhookEventSelector).pipe(
  Schema.minItems(1, { message: () => "must list at least one event type (or \"*\")" }),
  Schema.maxItems(100),
  Schema.annotations({ description: "the event types to receive (up to 100), or `[\"*\"]` for all" })
)

export const WebhookStatus = Schema.Literal("enabled", "failing", "disabled").annotations({
  description: "`disabled` while inactive (by request or after a 410), `failing` after a failed attempt " +
    "until the next success"
})
export type WebhookStatus = typeof WebhookStatus.Type

export const WebhookError = Schema.Struct({
  message: Schema.String.annotations({ description: "what went wrong" }),
  status_code: Schema.NullOr(Schema.Int).annotations({ description: "the receiver's HTTP status; null when none came" }),
  delivery_id: Schema.NullOr(Id("delivery")).annotations({ description: "the delivery that failed" }),
  at: Instant.annotations({ description: "when it failed" })
}).annotations({ identifier: "WebhookError" })
export type WebhookError = typeof WebhookError.Type

export const WebhookFields = {
  url: WebhookUrl,
  events: WebhookEvents,
  description: Schema.NullOr(Text(500)).annotations({ description: "what the endpoint is for, up to 500 characters" }),
  active: Schema.Boolean.annotations({ description: "inactive endpoints receive nothing; their events wait for `recover`" }),
  metadata: Metadata
}

export const WebhookEndpoint = Schema.Struct({
  id: Id("webhook"),
  object: ObjectType("webhook_endpoint"),
  ...WebhookFields,
  status: WebhookStatus,
  last_error: Schema.NullOr(WebhookError).annotations({ description: "the most recent failed attempt; null when none" }),
  ...Timestamps
}).annotations({ identifier: "WebhookEndpoint" })
export type WebhookEndpoint = typeof WebhookEndpoint.Type

/** The create and rotate responses: the endpoint and its new secret, shown this once. */
export const WebhookEndpointWithSecret = Schema.Struct({
  ...WebhookEndpoint.fields,
  secret: Schema.String.annotations({ description: "`whsec_…`: shown only in this response" })
}).annotations({ identifier: "WebhookEndpointWithSecret" })
export type WebhookEndpointWithSecret = typeof WebhookEndpointWithSecret.Type

const { url, events, ...optionalOnCreate } = WebhookFields
export const WebhookCreate = Schema.Struct({ url, events, ...optionalFields(optionalOnCreate) }).annotations({
  identifier: "WebhookCreate"
})
export type WebhookCreate = typeof WebhookCreate.Type

export const WebhookUpdate = Schema.Struct(optionalFields(WebhookFields)).annotations({ identifier: "WebhookUpdate" })
export type WebhookUpdate = typeof WebhookUpdate.Type

export const MAX_GRACE_PERIOD_SECONDS = 7 * 86_400
export const DEFAULT_GRACE_PERIOD_SECONDS = 86_400

export const WebhookRotateSecret = Schema.Struct({
  grace_period_seconds: optional(
    Schema.Int.pipe(
      Schema.between(0, MAX_GRACE_PERIOD_SECONDS, {
        message: () => `must be a whole number of seconds from 0 to ${MAX_GRACE_PERIOD_SECONDS}`
      })
    ).annotations({ description: "how long the old secret keeps signing too (default 86400; 0 = drop it now)" })
  )
}).annotations({ identifier: "WebhookRotateSecret" })
export type WebhookRotateSecret = typeof WebhookRotateSecret.Type

export const WebhookRecover = Schema.Struct({
  since: Instant.annotations({ description: "redeliver what this endpoint missed from this instant on" })
}).annotations({ identifier: "WebhookRecover" })
export type WebhookRecover = typeof WebhookRecover.Type

export const WebhookRecovery = Schema.Struct({
  object: ObjectType("webhook_recovery"),
  webhook_id: Id("webhook"),
  since: Instant.annotations({ description: "the instant recovery started from" }),
  requeued: Schema.Int.annotations({ description: "failed or waiting deliveries sent again now" }),
  created: Schema.Int.annotations({ description: "deliveries created for events the endpoint never got" })
}).annotations({ identifier: "WebhookRecovery" })
export type WebhookRecovery = typeof WebhookRecovery.Type

/** A stored signing secret; `expires_at` null for the current one. */
export interface StoredSecret {
  readonly secret: string
  readonly expires_at: string | null
}

/** The stored endpoint: the resource plus its secrets and where in the log it starts. */
export interface StoredWebhookEndpoint extends WebhookEndpoint {
  /** Newest first; the first never expires. */
  readonly secrets: ReadonlyArray<StoredSecret>
  /** The log's last seq when the endpoint was created: it receives only later events. */
  readonly from_seq: number
}

export const DeliveryStatus = Schema.Literal("pending", "succeeded", "failed")
export type DeliveryStatus = typeof DeliveryStatus.Type

export const DeliveryAttempt = Schema.Struct({
  attempted_at: Instant.annotations({ description: "when the attempt was sent" }),
  status_code: Schema.NullOr(Schema.Int).annotations({ description: "null when no HTTP response came" }),
  latency_ms: Schema.Int.annotations({ description: "milliseconds until the response (or the failure)" }),
  error: Schema.NullOr(Schema.String).annotations({ description: "why it failed; null on success" }),
  trigger: Schema.Literal("automatic", "manual").annotations({
    description: "`automatic` (the retry schedule) or `manual` (retry, test, recover)"
  })
}).annotations({ identifier: "DeliveryAttempt" })
export type DeliveryAttempt = typeof DeliveryAttempt.Type

/** The most recent attempts a delivery keeps (the count goes on in `attempt_count`). */
export const MAX_RECORDED_ATTEMPTS = 25

export const WebhookDelivery = Schema.Struct({
  id: Id("delivery"),
  object: ObjectType("webhook_delivery"),
  webhook_id: Id("webhook"),
  event_id: Id("event").annotations({ description: "also the `webhook-id` header of every attempt" }),
  event_type: Schema.String.annotations({ description: "the event's type" }),
  status: DeliveryStatus.annotations({ description: "`pending` while attempts remain, then `succeeded` or `failed`" }),
  attempt_count: Schema.Int.annotations({ description: "attempts made so far" }),
  next_attempt_at: Schema.NullOr(Instant).annotations({ description: "when the next automatic attempt is due; null when none is" }),
  last_error: Schema.NullOr(Schema.String).annotations({ description: "why the latest attempt failed; null when it did not" }),
  attempts: Schema.Array(DeliveryAttempt).annotations({ description: "the most recent attempts, oldest first (up to 25)" }),
  ...Timestamps
}).annotations({ identifier: "WebhookDelivery" })
export type WebhookDelivery = typeof WebhookDelivery.Type

/** The stored delivery: the resource plus the exact body every attempt sends. */
export interface StoredWebhookDelivery extends WebhookDelivery {
  readonly payload: string
}

/**
 * Work for the dispatcher: one row per delivery still to attempt. `due_ms` is when it may
 * be attempted; while an attempt is in flight it is the lease's end (`lease` set), so a
 * process that died mid-attempt leaves the row to be claimed again when the lease ends.
 * Small on purpose (the body stays in the delivery): the dispatcher scans these rows.
 */
export interface QueuedDelivery {
  readonly id: string
  readonly webhook_id: string
  readonly event_id: string
  readonly due_ms: number
  readonly lease: string | null
  /** Attempts made in the current automatic schedule. */
  readonly round_attempts: number
  /** A hand-triggered attempt: one try, no automatic schedule after it. */
  readonly manual: boolean
}
