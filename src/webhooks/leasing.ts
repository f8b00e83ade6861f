/**
 * Leasing: which due deliveries a dispatcher takes next. Oldest due first, within the
 * dispatcher's limits (in flight in all, in flight per endpoint); a queued delivery whose
 * endpoint is gone or disabled is settled as failed instead of sent.
 *
 * Where storage has `leaseTransaction` (PostgreSQL), leases are taken in one, reading the
 * due rows with `lock: "skip-locked"`: processes on one database lease disjoint rows without
 * waiting for each other or holding up tenants' writes. Elsewhere the ordinary transaction
 * (which excludes every other write) makes each lease one process's.
 */
import { Effect, Option } from "effect"
import type { QueuedDelivery, StoredWebhookEndpoint } from "./webhook.js"
import { currentStamp, type Stamp } from "../internal/resources.js"
import type { Condition, StorageService } from "../ports/storage.js"
import { type ClaimedDelivery, claimOf, type ClaimOptions, endpointKey, inTenant } from "./claims.js"
import { WebhookDeliveriesCollection, WebhookEndpointsCollection, WebhookQueueCollection } from "./collections.js"
import { newLease } from "./secret.js"

export const makeLeasing = (storage: StorageService) => {
  const endpoints = storage.collection(WebhookEndpointsCollection)
  const deliveries = storage.collection(WebhookDeliveriesCollection)
  const queue = storage.collection(WebhookQueueCollection)

  /** Settles a queued delivery that can no longer be sent (endpoint deleted or disabled). */
  const abandon = (row: QueuedDelivery, reason: string, now: Stamp) =>
    Effect.gen(function*() {
      yield* queue.remove(row.id)
      const found = yield* deliveries.get(row.id)
      if (Option.isSome(found)) {
        yield* deliveries.update({
          ...found.value,
          status: "failed",
          next_attempt_at: null,
          last_error: reason,
          updated_at: now.iso
        })
      }
    })

  const nextDueAfter = (nowMs: number) =>
    Effect.map(
      queue.listAcrossTenants({ where: [{ column: "due_ms", op: "gt", value: nowMs }], limit: 1 }),
      (later) => later[0]?.doc.due_ms ?? null
    )

  /**
   * Leases up to `max` due deliveries, oldest due first. `saturated` when due rows were
   * left because of the limits (wait for capacity); `next_due_ms` is the earliest later
   * due time (a retry, or a lease that may end), if any. When nothing is due it answers
   * from a read: an idle dispatcher must not take the write lock each poll.
   */
  const claimDue = (options: ClaimOptions) =>
    Effect.gen(function*() {
      const now = yield* currentStamp
      const due = yield* queue.listAcrossTenants({ where: [{ column: "due_ms", op: "lte", value: now.ms }], limit: 1 })
      if (due.length > 0) return yield* claimDueInTransaction(options)
      return { claimed: [] as Array<ClaimedDelivery>, saturated: false, next_due_ms: yield* nextDueAfter(now.ms) }
    })

  const leaseTransaction = storage.leaseTransaction ?? storage.transaction

  const claimDueInTransaction = (options: ClaimOptions) =>
    leaseTransaction(Effect.gen(function*() {
      const now = yield* currentStamp
      const exclude = options.exclude ?? new Set<string>()
      const perEndpoint = options.perEndpoint ?? Infinity
      const scan = Math.min(options.max * 2, 1000) + exclude.size
      const known = new Map<string, Option.Option<StoredWebhookEndpoint>>()
      const counts = new Map(options.inFlight ?? [])
      const claimed: Array<ClaimedDelivery> = []
      /** Rows this transaction already settled (a store may show them again before commit). */
      const handled = new Set<string>()
      /** Endpoints at their in-flight limit: later passes look past their rows. */
      const full = new Set<string>()
      let saturated = false
      // A backlog of one endpoint at its limit must not hide other endpoints' due rows:
      // when a window holds rows it cannot take, look again without those endpoints.
      for (let pass = 0; pass < 4 && claimed.length < options.max; pass++) {
        const rows = yield* queue.listAcrossTenants({
          where: [
            { column: "due_ms", op: "lte", value: now.ms },
            ...Array.from(full, (id): Condition => ({ column: "webhook_id", op: "ne", value: id }))
          ],
          limit: scan,
          lock: "skip-locked"
        })
        let newlyFull = false
        for (const { doc: row, tenant } of rows) {
          if (exclude.has(row.id) || handled.has(row.id)) continue
          if (claimed.length >= options.max) {
            saturated = true
            break
          }
          const key = endpointKey(tenant, row.webhook_id)
          let endpoint = known.get(key)
          if (endpoint === undefined) {
            endpoint = yield* inTenant(tenant)(endpoints.get(row.webhook_id))
            known.set(key, endpoint)
          }
          if ((counts.get(key) ?? 0) >= perEndpoint) {
            saturated = true
            if (!full.has(row.webhook_id)) {
              full.add(row.webhook_id)
              newlyFull = true
            }
            continue
          }
          handled.add(row.id)
          if (Option.isNone(endpoint) || !endpoint.value.active) {
            const reason = Option.isNone(endpoint) ? "endpoint deleted" : "endpoint disabled"
            yield* inTenant(tenant)(abandon(row, reason, now))
            continue
          }
          const delivery = yield* inTenant(tenant)(deliveries.get(row.id))
          if (Option.isNone(delivery)) {
            yield* inTenant(tenant)(queue.remove(row.id))
            continue
          }
          const leased: QueuedDelivery = { ...row, due_ms: now.ms + options.leaseMs, lease: yield* newLease }
          yield* inTenant(tenant)(queue.update(leased))
          claimed.push(claimOf(tenant, endpoint.value, leased, delivery.value.payload, now.ms))
          counts.set(key, (counts.get(key) ?? 0) + 1)
        }
        if (rows.length < scan) break // every due row was seen
        if (!newlyFull) {
          saturated = true // the window is full of rows in flight here: wait for them
          break
        }
      }
      return { claimed, saturated, next_due_ms: yield* nextDueAfter(now.ms) }
    }))

  return { claimDue } as const
}
