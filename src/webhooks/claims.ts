/**
 * What the outbox hands the dispatcher and gets back: a claimed (leased) delivery, the
 * limits of a claim, an attempt's record; and the keys that name tenants and endpoints in
 * maps that span tenants.
 */
import { Effect } from "effect"
import type { QueuedDelivery, StoredWebhookEndpoint } from "./webhook.js"
import { Tenant, type TenantId } from "../ports/tenant.js"
import type { AttemptResult } from "./retrySchedule.js"
import { liveSecrets } from "./secret.js"

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

/** Identifies a tenant in maps keyed across tenants. */
export const tenantKey = (tenant: TenantId): string => `${tenant.account_id}\u0000${tenant.environment}`

/** Identifies an endpoint across tenants (in-flight accounting). */
export const endpointKey = (tenant: TenantId, webhookId: string): string => `${tenantKey(tenant)}\u0000${webhookId}`

/** Runs `effect` as `tenant` (the outbox works across tenants; storage calls name one). */
export const inTenant = (tenant: TenantId) => <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.provideService(effect, Tenant, tenant)

/** The claim of a leased queue row, signed with the endpoint's secrets live at `nowMs`. */
export const claimOf = (
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
