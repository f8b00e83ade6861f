/**
 * Webhooks (docs/api.md §4): endpoint CRUD with the `whsec_` secret shown once, secret rotation
 * with a grace period, deliveries with every attempt recorded, manual retry, test events and
 * recovery of what a failing or disabled endpoint missed. Sending is the outbox's
 * (`WebhookOutbox`, driven by the dispatcher adapter); the work this module creates by hand
 * (retries, test events, recoveries) goes into the outbox's queue and wakes the dispatcher.
 */
import { Effect, Option, Schema } from "effect"
import { formatInstant, toMillis } from "../domain/common.js"
import { InvalidTransition } from "../domain/errors.js"
import { Id, idFloor, makeId } from "../domain/ids.js"
import {
  DEFAULT_GRACE_PERIOD_SECONDS,
  DeliveryStatus,
  type StoredWebhookDelivery,
  type StoredWebhookEndpoint,
  WEBHOOK_TEST_EVENT,
  WebhookCreate,
  type WebhookDelivery,
  type WebhookEndpoint,
  type WebhookEndpointWithSecret,
  WebhookRecover,
  type WebhookRecovery,
  WebhookRotateSecret,
  WebhookUpdate
} from "./webhook.js"
import { changes, currentStamp, findById, findOr404, listPage, newResource, PageParams } from "../internal/resources.js"
import { decodeInput } from "../domain/validation.js"
import { type Condition, Storage } from "../ports/storage.js"
import { WebhookDeliveriesCollection, WebhookEndpointsCollection } from "./collections.js"
import { WebhookOutbox } from "./Outbox.js"
import { checkOutboundUrl, WebhookPolicy } from "./policy.js"
import { liveSecrets, newWebhookSecret } from "./secret.js"

export const WebhookListParams = Schema.Struct({ ...PageParams }).annotations({ identifier: "WebhookListParams" })
export type WebhookListParams = typeof WebhookListParams.Encoded

export const DeliveryListParams = Schema.Struct({
  ...PageParams,
  status: Schema.optionalWith(DeliveryStatus, { exact: true }),
  event_id: Schema.optionalWith(Id("event"), { exact: true })
}).annotations({ identifier: "DeliveryListParams" })
export type DeliveryListParams = typeof DeliveryListParams.Encoded

const dedupe = <A>(items: ReadonlyArray<A>): Array<A> => [...new Set(items)]

const toEndpoint = (stored: StoredWebhookEndpoint): WebhookEndpoint => {
  const { from_seq: _seq, secrets: _secrets, ...endpoint } = stored
  return endpoint
}

const toDelivery = (stored: StoredWebhookDelivery): WebhookDelivery => {
  const { payload: _payload, ...delivery } = stored
  return delivery
}

/** Most deliveries one `recover` call creates for missed events. */
export const MAX_RECOVERED = 10_000

export class Webhooks extends Effect.Service<Webhooks>()("slotwise/Webhooks", {
  effect: Effect.gen(function*() {
    const storage = yield* Storage
    const policy = yield* WebhookPolicy
    const outbox = yield* WebhookOutbox
    const endpoints = storage.collection(WebhookEndpointsCollection)
    const deliveries = storage.collection(WebhookDeliveriesCollection)
    const find = findOr404(endpoints, "webhook endpoint")
    const decodeCreate = decodeInput(WebhookCreate)
    const decodeUpdate = decodeInput(WebhookUpdate)
    const decodeRotate = decodeInput(WebhookRotateSecret)
    const decodeRecover = decodeInput(WebhookRecover)
    const decodeList = decodeInput(WebhookListParams)
    const decodeDeliveryList = decodeInput(DeliveryListParams)

    const checkUrl = (text: string) => checkOutboundUrl(policy, text)

    const findDelivery = (webhookId: string, deliveryId: string) =>
      findById(
        "delivery of this webhook endpoint",
        (id) => Effect.map(deliveries.get(id), Option.filter((delivery) => delivery.webhook_id === webhookId))
      )(deliveryId)

    const requireActive = (endpoint: StoredWebhookEndpoint) =>
      endpoint.active
        ? Effect.void
        : Effect.fail(
          new InvalidTransition({ detail: `webhook endpoint ${endpoint.id} is disabled; set active: true first` })
        )

    // ---- endpoints ------------------------------------------------------------------------

    const create = (input: typeof WebhookCreate.Encoded) =>
      Effect.gen(function*() {
        const fields = yield* decodeCreate(input)
        yield* checkUrl(fields.url)
        const secret = yield* newWebhookSecret
        const stored = yield* storage.transaction(Effect.gen(function*() {
          const base = yield* newResource("webhook")
          const active = fields.active ?? true
          const endpoint: StoredWebhookEndpoint = {
            ...base,
            object: "webhook_endpoint",
            url: fields.url,
            events: dedupe(fields.events),
            description: fields.description ?? null,
            active,
            metadata: fields.metadata ?? {},
            status: active ? "enabled" : "disabled",
            last_error: null,
            secrets: [{ secret, expires_at: null }],
            // Inside the write transaction: every later commit gets a larger seq.
            from_seq: yield* storage.events.lastSeq
          }
          yield* endpoints.insert(endpoint)
          return endpoint
        }))
        return { ...toEndpoint(stored), secret } satisfies WebhookEndpointWithSecret
      })

    const get = (id: string) => Effect.map(find(id), toEndpoint)

    const list = (params: WebhookListParams = {}) =>
      Effect.gen(function*() {
        const { cursor, limit } = yield* decodeList(params)
        const page = yield* listPage(endpoints, { where: [], limit, cursor, filters: {} })
        return { ...page, data: page.data.map(toEndpoint) }
      })

    const update = (id: string, input: typeof WebhookUpdate.Encoded) =>
      Effect.gen(function*() {
        const patch = yield* decodeUpdate(input)
        if (patch.url !== undefined) yield* checkUrl(patch.url)
        const { enabled, next } = yield* storage.transaction(Effect.gen(function*() {
          const current = yield* find(id)
          if (!changes(current, patch)) return { enabled: false, next: current }
          const now = yield* currentStamp
          const active = patch.active ?? current.active
          const next: StoredWebhookEndpoint = {
            ...current,
            ...patch,
            events: patch.events === undefined ? current.events : dedupe(patch.events),
            status: !active ? "disabled" : current.active ? current.status : "enabled",
            updated_at: now.iso
          }
          yield* endpoints.update(next)
          return { enabled: active && !current.active, next }
        }))
        if (enabled) yield* outbox.notifyWork
        return toEndpoint(next)
      })

    /** Deletes the endpoint with its deliveries and whatever it still had queued. */
    const remove = (id: string) =>
      storage.transaction(Effect.gen(function*() {
        const current = yield* find(id)
        yield* outbox.dropQueued(id)
        const where: ReadonlyArray<Condition> = [{ column: "webhook_id", op: "eq", value: id }]
        for (const row of yield* deliveries.listIndexes({ where })) yield* deliveries.remove(row.id)
        yield* endpoints.remove(id)
        return toEndpoint(current)
      }))

    /**
     * A new secret, shown in this response only. The previous one keeps signing (a second
     * `v1,` signature on every delivery) for `grace_period_seconds`; 0 drops it at once.
     */
    const rotateSecret = (id: string, input: typeof WebhookRotateSecret.Encoded = {}) =>
      Effect.gen(function*() {
        const { grace_period_seconds: grace = DEFAULT_GRACE_PERIOD_SECONDS } = yield* decodeRotate(input)
        const secret = yield* newWebhookSecret
        const next = yield* storage.transaction(Effect.gen(function*() {
          const current = yield* find(id)
          const now = yield* currentStamp
          const expiresAt = formatInstant(now.ms + grace * 1000)
          const previous = grace === 0
            ? []
            : liveSecrets(current.secrets, now.ms).map((s) => (s.expires_at === null ? { ...s, expires_at: expiresAt } : s))
          const next: StoredWebhookEndpoint = {
            ...current,
            // Bounded: rotating many times within a grace period keeps the newest few.
            secrets: [{ secret, expires_at: null }, ...previous].slice(0, 5),
            updated_at: now.iso
          }
          yield* endpoints.update(next)
          return next
        }))
        return { ...toEndpoint(next), secret } satisfies WebhookEndpointWithSecret
      })

    // ---- deliveries -----------------------------------------------------------------------

    const listDeliveries = (id: string, params: DeliveryListParams = {}) =>
      Effect.gen(function*() {
        const { cursor, event_id, limit, status } = yield* decodeDeliveryList(params)
        yield* find(id)
        const where: Array<Condition> = [{ column: "webhook_id", op: "eq", value: id }]
        if (status !== undefined) where.push({ column: "status", op: "eq", value: status })
        if (event_id !== undefined) where.push({ column: "event_id", op: "eq", value: event_id })
        const page = yield* listPage(deliveries, {
          where,
          limit,
          cursor,
          filters: { webhook_id: id, status, event_id }
        })
        return { ...page, data: page.data.map(toDelivery) }
      })

    const getDelivery = (id: string, deliveryId: string) => Effect.zipRight(find(id), Effect.map(findDelivery(id, deliveryId), toDelivery))

    /**
     * Sends a delivery again now. A failed (or succeeded) one gets one manual attempt; a
     * pending one is attempted now instead of at its scheduled time; one in flight is left
     * as it is. `invalid_transition` while the endpoint is disabled.
     */
    const retryDelivery = (id: string, deliveryId: string) =>
      storage.transaction(Effect.gen(function*() {
        yield* requireActive(yield* find(id))
        const delivery = yield* findDelivery(id, deliveryId)
        const now = yield* currentStamp
        if (!(yield* outbox.requeueNow(id, delivery, now.ms))) return toDelivery(delivery) // in flight
        const next: StoredWebhookDelivery = { ...delivery, status: "pending", next_attempt_at: now.iso, updated_at: now.iso }
        yield* deliveries.update(next)
        return toDelivery(next)
      })).pipe(Effect.tap(() => outbox.notifyWork))

    /** Sends a `webhook.test` event (the endpoint itself as `data.object`) to this endpoint only. */
    const sendTest = (id: string) =>
      storage.transaction(Effect.gen(function*() {
        const endpoint = yield* find(id)
        yield* requireActive(endpoint)
        const now = yield* currentStamp
        const event = {
          id: makeId("event", now.ms),
          object: "event",
          type: WEBHOOK_TEST_EVENT,
          created_at: now.iso,
          data: { object: toEndpoint(endpoint) }
        }
        const { delivery } = yield* outbox.enqueue(id, event, JSON.stringify(event), now, {
          manual: false,
          lease: null,
          dueMs: now.ms
        })
        return toDelivery(delivery)
      })).pipe(Effect.tap(() => outbox.notifyWork))

    /**
     * Redelivers what the endpoint missed since `since`: its failed deliveries get a manual
     * attempt, its waiting ones are attempted now, and events it never got (it was disabled,
     * or inactive) get new deliveries with the full retry schedule — the same `webhook-id`
     * (event id) as any earlier copy, so receivers can deduplicate.
     */
    const recover = (id: string, input: typeof WebhookRecover.Encoded) =>
      storage.transaction(Effect.gen(function*() {
        const { since } = yield* decodeRecover(input)
        const endpoint = yield* find(id)
        yield* requireActive(endpoint)
        const now = yield* currentStamp
        const sinceMs = toMillis(since)
        let requeued = 0
        let created = 0
        const known = new Set<string>()
        const existing = yield* deliveries.list({
          where: [
            { column: "webhook_id", op: "eq", value: id },
            { column: "id", op: "gte", value: idFloor("delivery", sinceMs) }
          ]
        })
        for (const delivery of existing) {
          known.add(delivery.event_id)
          if (delivery.status === "succeeded") continue
          if (!(yield* outbox.requeueNow(id, delivery, now.ms))) continue // in flight
          yield* deliveries.update({ ...delivery, status: "pending", next_attempt_at: now.iso, updated_at: now.iso })
          requeued++
        }
        // Events the fan-out has passed (later ones it will still deliver) that this
        // endpoint selects but never got a delivery for.
        const fannedOutTo = yield* outbox.fannedOutTo
        const types = endpoint.events.includes("*") ? undefined : endpoint.events
        let after = endpoint.from_seq
        scan: for (;;) {
          const page = yield* storage.events.read({ after, limit: 500, ...(types !== undefined ? { types } : {}) })
          for (const stored of page) {
            if (stored.seq > fannedOutTo) break scan
            after = stored.seq
            const event = stored.event
            if (toMillis(event.created_at) < sinceMs || known.has(event.id)) continue
            if (created >= MAX_RECOVERED) break scan
            yield* outbox.enqueue(id, event, JSON.stringify(event), now, { manual: false, lease: null, dueMs: now.ms })
            known.add(event.id)
            created++
          }
          if (page.length < 500) break
        }
        return {
          object: "webhook_recovery",
          webhook_id: id,
          since,
          requeued,
          created
        } satisfies WebhookRecovery
      })).pipe(Effect.tap(() => outbox.notifyWork))

    return {
      create,
      get,
      list,
      update,
      delete: remove,
      rotateSecret,
      listDeliveries,
      getDelivery,
      retryDelivery,
      sendTest,
      recover
    } as const
  })
}) {}
