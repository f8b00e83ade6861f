/**
 * Where webhooks live in storage. Endpoints and deliveries are tenant resources; the queue
 * holds only deliveries still to attempt (so the dispatcher's scan across tenants stays
 * small however long the history grows); the fan-out cursor is one row of a tenant of its
 * own that no account can name.
 */
import type { QueuedDelivery, StoredWebhookDelivery, StoredWebhookEndpoint } from "./webhook.js"
import type { CollectionSpec } from "../ports/storage.js"
import type { TenantId } from "../ports/tenant.js"

export const WebhookEndpointsCollection: CollectionSpec<StoredWebhookEndpoint> = {
  name: "webhook_endpoints",
  indexes: { active: { type: "integer", get: (e) => (e.active ? 1 : 0) } },
  order: [],
  // Few rows per tenant, never filtered within one.
  storageIndexes: [],
  // The fan-out's "does anyone listen" after each commit, and then its active endpoints.
  acrossTenantIndexes: [["active"]]
}

export const WebhookDeliveriesCollection: CollectionSpec<StoredWebhookDelivery> = {
  name: "webhook_deliveries",
  indexes: {
    webhook_id: { type: "text", get: (d) => d.webhook_id },
    event_id: { type: "text", get: (d) => d.event_id },
    status: { type: "text", get: (d) => d.status }
  },
  order: [],
  // Written on every attempt: one index, for the endpoint's list (its filters scan within it).
  storageIndexes: [["webhook_id"]]
}

export const WebhookQueueCollection: CollectionSpec<QueuedDelivery> = {
  name: "webhook_queue",
  indexes: {
    due_ms: { type: "integer", get: (q) => q.due_ms },
    webhook_id: { type: "text", get: (q) => q.webhook_id }
  },
  order: ["due_ms"],
  // The dispatcher's reads go across tenants; per tenant only deleting an endpoint's rows.
  storageIndexes: [["webhook_id"]],
  // The dispatcher's next due delivery, its batch of due ones, and the next later one.
  acrossTenantIndexes: [["due_ms"]]
}

export interface FanOutCursor {
  readonly id: string
  /** The last event seq turned into deliveries. */
  readonly seq: number
}

export const WebhookCursorsCollection: CollectionSpec<FanOutCursor> = {
  name: "webhook_cursors",
  indexes: {},
  order: []
}

/**
 * The tenant that owns the fan-out cursor; the leading `_` keeps it apart from every `acc_`
 * id, and its name from the tenant that holds accounts and keys (`_system`).
 */
export const FAN_OUT_CURSOR_TENANT: TenantId = { account_id: "_slotwise_system", environment: "production" }

export const FAN_OUT_CURSOR_ID = "fan_out"
