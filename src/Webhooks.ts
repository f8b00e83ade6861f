/**
 * Webhooks (API.md §4): endpoint CRUD with the `whsec_` secret shown once, secret rotation
 * with a grace period, deliveries with every attempt recorded, manual retry, test events and
 * recovery of what a failing or disabled endpoint missed — and, under `dispatch`, the
 * storage side of delivery that the dispatcher adapter drives.
 *
 * From commit to delivery (the outbox):
 * 1. A change commits its event to the log (Events.mutate), in its own transaction.
 * 2. `dispatch.fanOut` reads the log after a stored cursor and, in ONE transaction, writes a
 *    delivery (and a queue row) for every active endpoint of the event's tenant that selects
 *    its type, and moves the cursor past the events it read. A crash before that commit
 *    leaves the cursor where it was, so the events are read again; after it, the rows exist
 *    and the cursor has moved, so nothing is fanned out twice. Transactions are serialized
 *    (BEGIN IMMEDIATE on SQLite), so several dispatching processes never share a batch.
 * 3. `dispatch.claimDue` leases due queue rows (the row's due time becomes the lease's end);
 *    the dispatcher sends them; `dispatch.recordAttempts` writes each outcome and the next
 *    due time, or removes the row when the delivery is final. A process killed mid-attempt
 *    leaves its rows leased; when the lease ends they are claimed again and sent with the
 *    same `webhook-id` (the event id). Delivery is therefore at least once, and a second
 *    copy only happens when a process dies (or an outcome write fails) mid-attempt.
 *
 * Which endpoints get an event: those of its tenant that select its type, were created
 * before it committed (`from_seq`), and are active when it is fanned out. A delivery that
 * falls due while its endpoint is disabled is settled as `failed` ("endpoint disabled");
 * `recover` sends what an endpoint missed. Fan-out in a separate step (rather than inside
 * every change's transaction) keeps writes independent of webhooks, works for events
 * committed by any process on the database, and loses nothing: the cursor and the rows
 * move together.
 */
import { Effect, Option, Random, Schema } from "effect"
import { formatInstant, toMillis } from "./domain/common.js"
import { InvalidTransition, NotFound, type StorageFailure } from "./domain/errors.js"
import { Id, IdPrefixes, makeId } from "./domain/ids.js"
import {
  DEFAULT_GRACE_PERIOD_SECONDS,
  DeliveryStatus,
  MAX_RECORDED_ATTEMPTS,
  type QueuedDelivery,
  type StoredSecret,
  type StoredWebhookDelivery,
  type StoredWebhookEndpoint,
  WEBHOOK_TEST_EVENT,
  WebhookCreate,
  type WebhookDelivery,
  type WebhookEndpoint,
  type WebhookEndpointWithSecret,
  type WebhookError,
  WebhookRecover,
  type WebhookRecovery,
  WebhookRotateSecret,
  WebhookUpdate
} from "./domain/webhook.js"
import { changes, currentStamp, findOr404, listPage, newResource, PageParams, type Stamp } from "./internal/resources.js"
import { decodeInput, validationFailed } from "./internal/validation.js"
import { type Condition, Storage } from "./ports/storage.js"
import { Tenant, type TenantId } from "./ports/tenant.js"
import { addressBlockReason, hostOf, isIpLiteral, literalHostBlockReason } from "./webhooks/address.js"
import {
  FAN_OUT_CURSOR_ID,
  SYSTEM_TENANT,
  WebhookCursorsCollection,
  WebhookDeliveriesCollection,
  WebhookEndpointsCollection,
  WebhookQueueCollection
} from "./webhooks/collections.js"
import { WebhookPolicy } from "./webhooks/policy.js"
import { type AttemptResult, decide, describeResult } from "./webhooks/schedule.js"
import { newLease, newWebhookSecret } from "./webhooks/secret.js"

export const WebhookListParams = Schema.Struct({ ...PageParams }).annotations({ identifier: "WebhookListParams" })
export type WebhookListParams = typeof WebhookListParams.Encoded

export const DeliveryListParams = Schema.Struct({
  ...PageParams,
  status: Schema.optionalWith(DeliveryStatus, { exact: true }),
  event_id: Schema.optionalWith(Id("event"), { exact: true })
}).annotations({ identifier: "DeliveryListParams" })
export type DeliveryListParams = typeof DeliveryListParams.Encoded

/** A queued delivery leased to one dispatcher: everything needed to send it. */
export interface ClaimedDelivery {
  readonly tenant: TenantId
  readonly delivery_id: string
  readonly webhook_id: string
  /** The `webhook-id` header: the event id, the same on every attempt. */
  readonly event_id: string
  readonly payload: string
  readonly url: string
  /** `whsec_…` secrets to sign with, newest first (more than one during a rotation's grace). */
  readonly secrets: ReadonlyArray<string>
  readonly lease: string
}

export interface ClaimOptions {
  /** Claim at most this many. */
  readonly max: number
  /** How long a claim holds the row before another dispatcher may take it. */
  readonly leaseMs: number
  /** At most this many in flight per endpoint (the rest wait their turn). */
  readonly perEndpoint?: number
  /** Deliveries this dispatcher has in flight, per `endpointKey`. */
  readonly inFlight?: ReadonlyMap<string, number>
  /** Delivery ids in flight here: never claimed again while they are. */
  readonly exclude?: ReadonlySet<string>
}

export interface AttemptRecord {
  readonly claim: ClaimedDelivery
  readonly result: AttemptResult
  /** Clock time the attempt started. */
  readonly started_ms: number
}

/** Identifies an endpoint across tenants (in-flight accounting). */
export const endpointKey = (tenant: TenantId, webhookId: string): string =>
  `${tenant.account_id}\u0000${tenant.environment}\u0000${webhookId}`

const tenantKey = (tenant: TenantId): string => `${tenant.account_id}\u0000${tenant.environment}`

const selects = (selectors: ReadonlyArray<string>, type: string): boolean =>
  selectors.includes("*") || selectors.includes(type)

const dedupe = <A>(items: ReadonlyArray<A>): Array<A> => [...new Set(items)]

/** The smallest id of `kind` created at or after `ms` (ids sort by creation time, ULID layout). */
const idFloor = (kind: "delivery", ms: number): string => {
  const alphabet = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
  let time = ""
  let t = Math.max(0, Math.floor(ms))
  for (let i = 0; i < 10; i++) {
    time = alphabet[t % 32] + time
    t = Math.floor(t / 32)
  }
  return `${IdPrefixes[kind]}_${time}${"0".repeat(16)}`
}

const toEndpoint = (stored: StoredWebhookEndpoint): WebhookEndpoint => {
  const { from_seq: _seq, secrets: _secrets, ...endpoint } = stored
  return endpoint
}

const toDelivery = (stored: StoredWebhookDelivery): WebhookDelivery => {
  const { payload: _payload, ...delivery } = stored
  return delivery
}

/** The secrets that still sign at `nowMs`, newest first. */
const liveSecrets = (secrets: ReadonlyArray<StoredSecret>, nowMs: number): Array<StoredSecret> =>
  secrets.filter((s) => s.expires_at === null || toMillis(s.expires_at) > nowMs)

/** Most deliveries one `recover` call creates for missed events. */
export const MAX_RECOVERED = 10_000

export class Webhooks extends Effect.Service<Webhooks>()("slotwise/Webhooks", {
  effect: Effect.gen(function*() {
    const storage = yield* Storage
    const policy = yield* WebhookPolicy
    const endpoints = storage.collection(WebhookEndpointsCollection)
    const deliveries = storage.collection(WebhookDeliveriesCollection)
    const queue = storage.collection(WebhookQueueCollection)
    const cursors = storage.collection(WebhookCursorsCollection)
    const find = findOr404(endpoints, "webhook endpoint")
    const decodeCreate = decodeInput(WebhookCreate)
    const decodeUpdate = decodeInput(WebhookUpdate)
    const decodeRotate = decodeInput(WebhookRotateSecret)
    const decodeRecover = decodeInput(WebhookRecover)
    const decodeList = decodeInput(WebhookListParams)
    const decodeDeliveryList = decodeInput(DeliveryListParams)

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

    const invalidUrl = (message: string) => validationFailed([{ path: "url", message }])

    /**
     * The address rules for a URL (syntax was checked by its schema): a literal non-public
     * address or `localhost` is refused, and so is a name that resolves to one, when a
     * resolver is available; all of it unless private addresses are allowed.
     */
    const checkUrl = (text: string) =>
      Effect.gen(function*() {
        if (policy.allowPrivate) return
        const url = new URL(text)
        const literal = literalHostBlockReason(url)
        if (literal !== undefined) {
          return yield* invalidUrl(`must not point to a ${literal} address`)
        }
        const host = hostOf(url)
        if (policy.resolve === undefined || isIpLiteral(host)) return
        const addresses = yield* policy.resolve(host).pipe(Effect.orElseSucceed((): ReadonlyArray<string> => []))
        for (const address of addresses) {
          const reason = addressBlockReason(address)
          if (reason !== undefined) return yield* invalidUrl(`resolves to ${address}, a ${reason} address`)
        }
      })

    const findDelivery = (webhookId: string, deliveryId: string) =>
      Effect.flatMap(deliveries.get(deliveryId), (found) =>
        Option.isSome(found) && found.value.webhook_id === webhookId
          ? Effect.succeed(found.value)
          : Effect.fail(new NotFound({ detail: `no delivery ${deliveryId} of webhook endpoint ${webhookId}` })))

    const requireActive = (endpoint: StoredWebhookEndpoint) =>
      endpoint.active
        ? Effect.void
        : Effect.fail(
          new InvalidTransition({ detail: `webhook endpoint ${endpoint.id} is disabled; set active: true first` })
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
        if (enabled) yield* notifyWork
        return toEndpoint(next)
      })

    /** Deletes the endpoint with its deliveries and whatever it still had queued. */
    const remove = (id: string) =>
      storage.transaction(Effect.gen(function*() {
        const current = yield* find(id)
        const where: ReadonlyArray<Condition> = [{ column: "webhook_id", op: "eq", value: id }]
        for (const row of yield* queue.listIndexes({ where })) yield* queue.remove(row.id)
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

    const getDelivery = (id: string, deliveryId: string) =>
      Effect.zipRight(find(id), Effect.map(findDelivery(id, deliveryId), toDelivery))

    /**
     * Sends a delivery again now. A failed (or succeeded) one gets one manual attempt; a
     * pending one is attempted now instead of at its scheduled time; one in flight is left
     * as it is. `invalid_transition` while the endpoint is disabled.
     */

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

    const retryDelivery = (id: string, deliveryId: string) =>
      storage.transaction(Effect.gen(function*() {
        yield* requireActive(yield* find(id))
        const delivery = yield* findDelivery(id, deliveryId)
        const now = yield* currentStamp
        if (!(yield* requeueNow(id, delivery, now.ms))) return toDelivery(delivery) // in flight
        const next: StoredWebhookDelivery = { ...delivery, status: "pending", next_attempt_at: now.iso, updated_at: now.iso }
        yield* deliveries.update(next)
        return toDelivery(next)
      })).pipe(Effect.tap(() => notifyWork))

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
        const { delivery } = yield* enqueue(id, event, JSON.stringify(event), now, {
          manual: false,
          lease: null,
          dueMs: now.ms
        })
        return toDelivery(delivery)
      })).pipe(Effect.tap(() => notifyWork))

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
          if (!(yield* requeueNow(id, delivery, now.ms))) continue // in flight
          yield* deliveries.update({ ...delivery, status: "pending", next_attempt_at: now.iso, updated_at: now.iso })
          requeued++
        }
        // Events the fan-out has passed (later ones it will still deliver) that this
        // endpoint selects but never got a delivery for.
        const cursor = yield* Effect.provideService(cursors.get(FAN_OUT_CURSOR_ID), Tenant, SYSTEM_TENANT)
        const fannedOutTo = Option.match(cursor, { onNone: () => 0, onSome: (c) => c.seq })
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
            yield* enqueue(id, event, JSON.stringify(event), now, { manual: false, lease: null, dueMs: now.ms })
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
      })).pipe(Effect.tap(() => notifyWork))

    // ---- dispatch (driven by the dispatcher adapter) ----------------------------------------

    /** The fan-out cursor as this process last saw it: the log is read only when it grew. */
    let knownCursor = 0

    const claimOf = (
      tenant: TenantId,
      endpoint: StoredWebhookEndpoint,
      row: QueuedDelivery,
      payload: string,
      nowMs: number
    ): ClaimedDelivery => ({
      tenant,
      delivery_id: row.id,
      webhook_id: endpoint.id,
      event_id: row.event_id,
      payload,
      url: endpoint.url,
      secrets: liveSecrets(endpoint.secrets, nowMs).map((s) => s.secret),
      lease: row.lease!
    })

    /**
     * Turns committed events after the cursor into deliveries (one transaction per batch),
     * claiming up to `claim.max` of the new ones for immediate sending. `more` when the
     * batch was full and the log may hold more.
     */
    const fanOut = (options: { readonly batch?: number; readonly claim?: ClaimOptions } = {}) =>
      Effect.gen(function*() {
        const batch = options.batch ?? 500
        const last = yield* storage.events.lastSeq
        if (last <= knownCursor) return { processed: 0, claimed: [] as Array<ClaimedDelivery>, more: false }
        const outcome = yield* storage.transaction(Effect.gen(function*() {
          const stored = yield* Effect.provideService(cursors.get(FAN_OUT_CURSOR_ID), Tenant, SYSTEM_TENANT)
          const after = Option.match(stored, { onNone: () => 0, onSome: (c) => c.seq })
          const active = yield* endpoints.listAcrossTenants({ where: [{ column: "active", op: "eq", value: 1 }] })
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
                const { row } = yield* Effect.provideService(
                  enqueue(endpoint.id, event, payload, now, {
                    manual: false,
                    lease,
                    dueMs: take ? now.ms + claim!.leaseMs : now.ms
                  }),
                  Tenant,
                  tenant
                )
                if (take) {
                  claimed.push(claimOf(tenant, endpoint, row, payload, now.ms))
                  counts.set(key, (counts.get(key) ?? 0) + 1)
                }
              }
            }
          }
          if (cursor > after) {
            yield* Effect.provideService(cursors.update({ id: FAN_OUT_CURSOR_ID, seq: cursor }), Tenant, SYSTEM_TENANT)
          }
          return { processed, claimed, more, cursor }
        }))
        knownCursor = Math.max(knownCursor, outcome.cursor)
        return { processed: outcome.processed, claimed: outcome.claimed, more: outcome.more }
      })

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

    /**
     * Leases up to `max` due deliveries, oldest due first. `saturated` when due rows were
     * left because of the limits (wait for capacity); `next_due_ms` is the earliest later
     * due time (a retry, or a lease that may end), if any.
     */
    /** When nothing is due, answer from a read: an idle dispatcher must not take the write lock each poll. */
    const claimDue = (options: ClaimOptions) =>
      Effect.gen(function*() {
        const now = yield* currentStamp
        const due = yield* queue.listAcrossTenants({ where: [{ column: "due_ms", op: "lte", value: now.ms }], limit: 1 })
        if (due.length > 0) return yield* claimDueInTransaction(options)
        const later = yield* queue.listAcrossTenants({ where: [{ column: "due_ms", op: "gt", value: now.ms }], limit: 1 })
        return { claimed: [] as Array<ClaimedDelivery>, saturated: false, next_due_ms: later[0]?.doc.due_ms ?? null }
      })

    const claimDueInTransaction = (options: ClaimOptions) =>
      storage.transaction(Effect.gen(function*() {
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
            limit: scan
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
              endpoint = yield* Effect.provideService(endpoints.get(row.webhook_id), Tenant, tenant)
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
            if (Option.isNone(endpoint)) {
              yield* Effect.provideService(abandon(row, "endpoint deleted", now), Tenant, tenant)
              continue
            }
            if (!endpoint.value.active) {
              yield* Effect.provideService(abandon(row, "endpoint disabled", now), Tenant, tenant)
              continue
            }
            const delivery = yield* Effect.provideService(deliveries.get(row.id), Tenant, tenant)
            if (Option.isNone(delivery)) {
              yield* Effect.provideService(queue.remove(row.id), Tenant, tenant)
              continue
            }
            const leased: QueuedDelivery = { ...row, due_ms: now.ms + options.leaseMs, lease: yield* newLease }
            yield* Effect.provideService(queue.update(leased), Tenant, tenant)
            claimed.push(claimOf(tenant, endpoint.value, leased, delivery.value.payload, now.ms))
            counts.set(key, (counts.get(key) ?? 0) + 1)
          }
          if (rows.length < scan) break // every due row was seen
          if (!newlyFull) {
            saturated = true // the window is full of rows in flight here: wait for them
            break
          }
        }
        const later = yield* queue.listAcrossTenants({ where: [{ column: "due_ms", op: "gt", value: now.ms }], limit: 1 })
        return { claimed, saturated, next_due_ms: later[0]?.doc.due_ms ?? null }
      }))

    /**
     * Writes the outcomes of attempts (one transaction for the batch): each delivery's
     * attempt, status and next due time; each endpoint's health (`failing` with the last
     * error, back to `enabled` on success, disabled on 410). An outcome whose lease is no
     * longer the row's (another dispatcher took over, or the tenant was reset) is dropped.
     */
    const recordAttempts = (records: ReadonlyArray<AttemptRecord>): Effect.Effect<void, StorageFailure> =>
      storage.transaction(Effect.gen(function*() {
        const now = yield* currentStamp
        type Health =
          | { readonly _tag: "ok" }
          | { readonly _tag: "failing"; readonly error: WebhookError }
          | { readonly _tag: "gone"; readonly error: WebhookError }
        const health = new Map<string, { tenant: TenantId; webhook_id: string; health: Health }>()
        for (const { claim, result, started_ms } of records) {
          yield* Effect.provideService(
            Effect.gen(function*() {
              const queued = yield* queue.get(claim.delivery_id)
              if (Option.isNone(queued) || queued.value.lease !== claim.lease) return
              const row = queued.value
              const found = yield* deliveries.get(claim.delivery_id)
              if (Option.isNone(found)) {
                yield* queue.remove(row.id)
                return
              }
              const delivery = found.value
              const attemptsInRound = row.manual ? 1 : row.round_attempts + 1
              const verdict = decide({
                result,
                attemptsInRound,
                manual: row.manual,
                nowMs: now.ms,
                random: yield* Random.next
              })
              const error = verdict._tag === "Gone" ? "HTTP 410 Gone: endpoint disabled" : describeResult(result)
              const statusCode = result._tag === "Response" ? result.status : null
              const attemptedAt = formatInstant(started_ms)
              const nextDue = verdict._tag === "Retry" ? now.ms + verdict.delay_ms : null
              yield* deliveries.update({
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
                updated_at: now.iso
              })
              if (nextDue === null) yield* queue.remove(row.id)
              else yield* queue.update({ ...row, due_ms: nextDue, lease: null, round_attempts: attemptsInRound })
              const key = endpointKey(claim.tenant, claim.webhook_id)
              const previous = health.get(key)?.health
              if (previous?._tag === "gone") return
              const report = { message: error ?? "", status_code: statusCode, delivery_id: delivery.id, at: attemptedAt }
              health.set(key, {
                tenant: claim.tenant,
                webhook_id: claim.webhook_id,
                health: verdict._tag === "Succeeded"
                  ? { _tag: "ok" }
                  : verdict._tag === "Gone"
                  ? { _tag: "gone", error: report }
                  : { _tag: "failing", error: report }
              })
            }),
            Tenant,
            claim.tenant
          )
        }
        for (const { health: h, tenant, webhook_id } of health.values()) {
          yield* Effect.provideService(
            Effect.gen(function*() {
              const found = yield* endpoints.get(webhook_id)
              if (Option.isNone(found)) return
              const endpoint = found.value
              let next: StoredWebhookEndpoint
              switch (h._tag) {
                case "ok":
                  if (endpoint.status !== "failing") return
                  next = { ...endpoint, status: "enabled" }
                  break
                case "failing":
                  next = { ...endpoint, status: endpoint.active ? "failing" : "disabled", last_error: h.error }
                  break
                case "gone":
                  next = { ...endpoint, active: false, status: "disabled", last_error: h.error }
                  break
              }
              yield* endpoints.update(next)
            }),
            Tenant,
            tenant
          )
        }
      }))

    /** Calls `listener` after commits that queued work outside the event log (tests, retries). */
    const onWork = (listener: () => void): (() => void) => {
      workListeners.add(listener)
      return () => {
        workListeners.delete(listener)
      }
    }

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
      recover,
      dispatch: { fanOut, claimDue, recordAttempts, onWork }
    } as const
  })
}) {}
