/**
 * The webhook outbox: the storage side of delivery that the dispatcher adapter drives, and
 * the queue that endpoint management (Webhooks) puts manual work into.
 *
 * From commit to delivery:
 * 1. A change commits its event to the log (Events.mutate), in its own transaction.
 * 2. `fanOut` reads the log after a stored cursor and, in ONE transaction, writes a
 *    delivery (and a queue row) for every active endpoint of the event's tenant that selects
 *    its type, and moves the cursor past the events it read. A crash before that commit
 *    leaves the cursor where it was, so the events are read again; after it, the rows exist
 *    and the cursor has moved, so nothing is fanned out twice. Transactions are serialized
 *    (BEGIN IMMEDIATE on SQLite), so several dispatching processes never share a batch.
 * 3. `claimDue` leases due queue rows (the row's due time becomes the lease's end); the
 *    dispatcher sends them; `recordAttempts` writes each outcome and the next due time, or
 *    removes the row when the delivery is final. A process killed mid-attempt leaves its
 *    rows leased; when the lease ends they are claimed again and sent with the same
 *    `webhook-id` (the event id). Delivery is therefore at least once, and a second copy
 *    only happens when a process dies (or an outcome write fails) mid-attempt.
 *
 * Which endpoints get an event: those of its tenant that select its type, were created
 * before it committed (`from_seq`), and are active when it is fanned out. A delivery that
 * falls due while its endpoint is disabled is settled as `failed` ("endpoint disabled").
 * Fan-out in a separate step (rather than inside every change's transaction) keeps writes
 * independent of webhooks, works for events committed by any process on the database, and
 * loses nothing: the cursor and the rows move together.
 */
import { Effect, Option, Random } from "effect"
import type { StorageFailure } from "../domain/errors.js"
import { makeId } from "../domain/ids.js"
import type { QueuedDelivery, StoredWebhookDelivery, StoredWebhookEndpoint } from "./webhook.js"
import { currentStamp, type Stamp } from "../internal/resources.js"
import { type Condition, Storage } from "../ports/storage.js"
import type { TenantId } from "../ports/tenant.js"
import { applyAttempt, type EndpointHealth, laterHealth, withHealth } from "./attempts.js"
import { type AttemptRecord, type ClaimedDelivery, claimOf, type ClaimOptions, endpointKey, inTenant, tenantKey } from "./claims.js"
import {
  FAN_OUT_CURSOR_ID,
  FAN_OUT_CURSOR_TENANT,
  WebhookCursorsCollection,
  WebhookDeliveriesCollection,
  WebhookEndpointsCollection,
  WebhookQueueCollection
} from "./collections.js"
import { makeLeasing } from "./leasing.js"
import { newLease } from "./secret.js"

export { type AttemptRecord, type ClaimedDelivery, type ClaimOptions, endpointKey, tenantKey } from "./claims.js"

const asCursorOwner = inTenant(FAN_OUT_CURSOR_TENANT)

/** Events the fan-out cursor may fall behind while no endpoint is active. */
const IDLE_CURSOR_LAG = 1000

const selects = (selectors: ReadonlyArray<string>, type: string): boolean => selectors.includes("*") || selectors.includes(type)

export class WebhookOutbox extends Effect.Service<WebhookOutbox>()("slotwise/WebhookOutbox", {
  effect: Effect.gen(function*() {
    const storage = yield* Storage
    const endpoints = storage.collection(WebhookEndpointsCollection)
    const deliveries = storage.collection(WebhookDeliveriesCollection)
    const queue = storage.collection(WebhookQueueCollection)
    const cursors = storage.collection(WebhookCursorsCollection)
    const { claimDue } = makeLeasing(storage)

    /** Called after a commit that gave the dispatcher new work not visible in the event log. */
    const workListeners = new Set<() => void>()
    const notifyWork = Effect.sync(() => {
      for (const listener of workListeners) {
        try {
          listener()
        } catch {
          // a listener's failure must not fail the request that made the work
        }
      }
    })

    /** Calls `listener` after commits that queued work outside the event log (tests, retries). */
    const onWork = (listener: () => void): () => void => {
      workListeners.add(listener)
      return () => {
        workListeners.delete(listener)
      }
    }

    /** The last event seq turned into deliveries (0 before the first fan-out). */
    const fannedOutTo = Effect.map(
      asCursorOwner(cursors.get(FAN_OUT_CURSOR_ID)),
      Option.match({ onNone: () => 0, onSome: (c) => c.seq })
    )

    /** A new delivery of `event` to an endpoint, with its queue row; in the caller's transaction. */
    const enqueue = (
      webhookId: string,
      event: { readonly id: string; readonly type: string },
      payload: string,
      now: Stamp,
      options: { readonly manual: boolean; readonly lease: string | null; readonly dueMs: number }
    ) =>
      Effect.gen(function*() {
        const id = makeId("delivery", now.ms)
        const delivery: StoredWebhookDelivery = {
          id,
          object: "webhook_delivery",
          webhook_id: webhookId,
          event_id: event.id,
          event_type: event.type,
          status: "pending",
          attempt_count: 0,
          next_attempt_at: now.iso,
          last_error: null,
          attempts: [],
          created_at: now.iso,
          updated_at: now.iso,
          payload
        }
        const row: QueuedDelivery = {
          id,
          webhook_id: webhookId,
          event_id: event.id,
          due_ms: options.dueMs,
          lease: options.lease,
          round_attempts: 0,
          manual: options.manual
        }
        yield* deliveries.insert(delivery)
        yield* queue.insert(row)
        return { delivery, row }
      })

    /**
     * Puts a delivery back in the queue, due now, as a manual retry; `false` when an attempt
     * holds its lease (it is in flight and will report itself).
     */
    const requeueNow = (webhookId: string, delivery: StoredWebhookDelivery, nowMs: number) =>
      Effect.gen(function*() {
        const queued = yield* queue.get(delivery.id)
        if (Option.isSome(queued)) {
          const row = queued.value
          if (row.lease !== null && row.due_ms > nowMs) return false
          yield* queue.update({ ...row, due_ms: nowMs, lease: null })
        } else {
          yield* queue.insert({
            id: delivery.id,
            webhook_id: webhookId,
            event_id: delivery.event_id,
            due_ms: nowMs,
            lease: null,
            round_attempts: 0,
            manual: true
          })
        }
        return true
      })

    /** Drops whatever an endpoint still has queued; in the caller's transaction. */
    const dropQueued = (webhookId: string) =>
      Effect.gen(function*() {
        const where: ReadonlyArray<Condition> = [{ column: "webhook_id", op: "eq", value: webhookId }]
        for (const row of yield* queue.listIndexes({ where })) yield* queue.remove(row.id)
      })

    // ---- driven by the dispatcher -------------------------------------------------------------

    /** The fan-out cursor as this process last saw it: the log is read only when it grew. */
    let knownCursor = 0
    const ACTIVE: ReadonlyArray<Condition> = [{ column: "active", op: "eq", value: 1 }]

    /**
     * Turns committed events after the cursor into deliveries (one transaction per batch),
     * claiming up to `claim.max` of the new ones for immediate sending. `more` when the
     * batch was full and the log may hold more; `unheard` when there were new events and
     * no endpoint was active anywhere to hear them.
     */
    const fanOut = (options: { readonly batch?: number; readonly claim?: ClaimOptions } = {}) =>
      Effect.gen(function*() {
        const batch = options.batch ?? 500
        const last = yield* storage.events.lastSeq
        const nothing = { processed: 0, claimed: [] as Array<ClaimedDelivery>, more: false, unheard: false }
        // No endpoint is active anywhere: what was new is fanned out to no one.
        const unheard = { ...nothing, unheard: true }
        if (last <= knownCursor) return nothing
        // Another process may have fanned these out already (it woke on the same commits):
        // a plain read of the stored cursor saves taking the write lock for nothing. A stale
        // read only means taking it, as before.
        knownCursor = Math.max(knownCursor, yield* fannedOutTo)
        if (last <= knownCursor) return nothing
        // Nobody listens: nothing to write, so no write lock after every commit. The stored
        // cursor stays behind (an endpoint created later is fanned out from it, its own
        // `from_seq` leaving out what came before) and is moved, below, only once the lag
        // reaches IDLE_CURSOR_LAG, which bounds what such a later fan-out reads.
        if (last - knownCursor < IDLE_CURSOR_LAG && (yield* endpoints.listAcrossTenants({ where: ACTIVE, limit: 1 })).length === 0) {
          return unheard
        }
        const outcome = yield* storage.transaction(Effect.gen(function*() {
          const after = yield* fannedOutTo
          const active = yield* endpoints.listAcrossTenants({ where: ACTIVE })
          const claimed: Array<ClaimedDelivery> = []
          let cursor = after
          let processed = 0
          let more = false
          if (active.length === 0) {
            // Nobody listens: skip to the end of the log.
            cursor = Math.max(after, yield* storage.events.lastSeq)
          } else {
            const byTenant = new Map<string, Array<StoredWebhookEndpoint>>()
            for (const { doc, tenant } of active) {
              const key = tenantKey(tenant)
              const list = byTenant.get(key)
              if (list === undefined) byTenant.set(key, [doc])
              else list.push(doc)
            }
            const page = yield* storage.events.readAcrossTenants({ after, limit: batch })
            processed = page.length
            more = page.length === batch
            const now = yield* currentStamp
            const claim = options.claim
            const counts = new Map(claim?.inFlight ?? [])
            for (const { event, seq, tenant } of page) {
              cursor = seq
              const listening = byTenant.get(tenantKey(tenant))
              if (listening === undefined) continue
              let payload: string | undefined
              for (const endpoint of listening) {
                if (seq <= endpoint.from_seq || !selects(endpoint.events, event.type)) continue
                payload ??= JSON.stringify(event)
                const key = endpointKey(tenant, endpoint.id)
                const take = claim !== undefined && claimed.length < claim.max &&
                  (counts.get(key) ?? 0) < (claim.perEndpoint ?? Infinity)
                const lease = take ? yield* newLease : null
                const { row } = yield* inTenant(tenant)(enqueue(endpoint.id, event, payload, now, {
                  manual: false,
                  lease,
                  dueMs: take ? now.ms + claim!.leaseMs : now.ms
                }))
                if (take) {
                  claimed.push(claimOf(tenant, endpoint, row, payload, now.ms))
                  counts.set(key, (counts.get(key) ?? 0) + 1)
                }
              }
            }
          }
          if (cursor > after) yield* asCursorOwner(cursors.update({ id: FAN_OUT_CURSOR_ID, seq: cursor }))
          return { processed, claimed, more, cursor, unheard: active.length === 0 }
        }))
        knownCursor = Math.max(knownCursor, outcome.cursor)
        return { processed: outcome.processed, claimed: outcome.claimed, more: outcome.more, unheard: outcome.unheard }
      })

    /**
     * Writes the outcomes of attempts (one transaction for the batch): each delivery's
     * attempt, status and next due time; each endpoint's health (`failing` with the last
     * error, back to `enabled` on success, disabled on 410). An outcome whose lease is no
     * longer the row's (another dispatcher took over, or the tenant was reset) is dropped.
     */
    const recordAttempts = (records: ReadonlyArray<AttemptRecord>): Effect.Effect<void, StorageFailure> =>
      storage.transaction(Effect.gen(function*() {
        const now = yield* currentStamp
        const health = new Map<string, { tenant: TenantId; webhook_id: string; health: EndpointHealth }>()
        for (const { claim, result, started_ms } of records) {
          yield* inTenant(claim.tenant)(Effect.gen(function*() {
            const queued = yield* queue.get(claim.delivery_id)
            if (Option.isNone(queued) || queued.value.lease !== claim.lease) return
            const found = yield* deliveries.get(claim.delivery_id)
            if (Option.isNone(found)) {
              yield* queue.remove(claim.delivery_id)
              return
            }
            const outcome = applyAttempt({
              delivery: found.value,
              row: queued.value,
              result,
              startedMs: started_ms,
              nowMs: now.ms,
              random: yield* Random.next
            })
            yield* deliveries.update(outcome.delivery)
            if (outcome.row === null) yield* queue.remove(claim.delivery_id)
            else yield* queue.update(outcome.row)
            const key = endpointKey(claim.tenant, claim.webhook_id)
            health.set(key, {
              tenant: claim.tenant,
              webhook_id: claim.webhook_id,
              health: laterHealth(health.get(key)?.health, outcome.health)
            })
          }))
        }
        for (const { health: h, tenant, webhook_id } of health.values()) {
          yield* inTenant(tenant)(Effect.gen(function*() {
            const found = yield* endpoints.get(webhook_id)
            if (Option.isNone(found)) return
            const next = withHealth(found.value, h)
            if (next !== undefined) yield* endpoints.update(next)
          }))
        }
      }))

    return {
      enqueue,
      requeueNow,
      dropQueued,
      fannedOutTo,
      notifyWork,
      onWork,
      fanOut,
      claimDue,
      recordAttempts
    } as const
  })
}) {}
