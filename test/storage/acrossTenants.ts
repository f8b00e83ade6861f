/**
 * The scans across tenants the workers run (`listAcrossTenants`), with the index each should
 * read: shared by the SQLite and PostgreSQL plan tests.
 */
import { Effect } from "effect"
import type { Dialect } from "../../adapters/sql/dialect.js"
import { limitSql, orderSql, quote, shapeOf, tableOf, whereSql } from "../../adapters/sql/query.js"
import { CalendarsCollection } from "../../src/calendars/collections.js"
import { OAuthGrantsCollection } from "../../src/oauth/collections.js"
import type { CollectionSpec, ListQuery, Storage } from "../../src/ports/storage.js"
import { ReminderJobsCollection } from "../../src/reminders/Reminders.js"
import { WebhookEndpointsCollection, WebhookQueueCollection } from "../../src/webhooks/collections.js"
import { as, tenantA, tenantB } from "./contract.js"

export interface AcrossTenantScan {
  readonly name: string
  readonly spec: CollectionSpec<any>
  readonly query: ListQuery
  /** The index group the scan reads. */
  readonly index: ReadonlyArray<string>
  /** Whether the index gives the rows in the scan's order (no sort after it). */
  readonly ordered: boolean
  /** A stored document with these index values. */
  readonly doc: (id: string, n: number) => { readonly id: string }
}

const NOW = 1_700_000_000_000

export const acrossTenantScans: ReadonlyArray<AcrossTenantScan> = [
  {
    name: "reminders: the next due job",
    spec: ReminderJobsCollection,
    query: { where: [{ column: "due_ms", op: "lte", value: NOW }], limit: 1 },
    index: ["due_ms"],
    ordered: true,
    doc: (id, n) => ({ id, booking_id: `bk_${n}`, due_ms: NOW + n, tenant_key: `t${n}` })
  },
  ...[
    { name: "the next due one", query: { where: [{ column: "due_ms", op: "lte", value: NOW }], limit: 1 } },
    { name: "the next later one", query: { where: [{ column: "due_ms", op: "gt", value: NOW }], limit: 1 } },
    {
      name: "a lease batch past full endpoints",
      query: {
        where: [{ column: "due_ms", op: "lte", value: NOW }, { column: "webhook_id", op: "ne", value: "wh_full" }],
        limit: 200
      }
    }
  ].map(({ name, query }): AcrossTenantScan => ({
    name: `webhook queue: ${name}`,
    spec: WebhookQueueCollection,
    query: query as ListQuery,
    index: ["due_ms"],
    ordered: true,
    doc: (id, n) => ({ id, due_ms: NOW + n, webhook_id: `wh_${n}` })
  })),
  ...[{ limit: 1 }, {}].map((limit): AcrossTenantScan => ({
    name: `webhook endpoints: the active ones${"limit" in limit ? ", whether any" : ""}`,
    spec: WebhookEndpointsCollection,
    query: { where: [{ column: "active", op: "eq", value: 1 }], ...limit },
    index: ["active"],
    ordered: true,
    doc: (id, n) => ({ id, active: n % 2 === 0 })
  })),
  ...[1, 50].map((limit): AcrossTenantScan => ({
    name: `calendars: the due ones, limit ${limit}`,
    spec: CalendarsCollection,
    query: { where: [{ column: "due_ms", op: "lte", value: NOW }], limit },
    index: ["due_ms"],
    // In id order: the range read gives the due calendars, a sort of those few follows.
    ordered: false,
    doc: (id, n) => ({ id, staff_id: `st_${n}`, due_ms: NOW + n })
  })),
  {
    name: "oauth grants: a user's in every tenant",
    spec: OAuthGrantsCollection,
    query: { where: [{ column: "user_id", op: "eq", value: "usr_1" }] },
    index: ["user_id"],
    ordered: true,
    doc: (id, n) => ({ id, client_id: `cl_${n}`, user_id: `usr_${n}` })
  }
]

/** The spec as it was before it had indexes across tenants (a table made by an earlier version). */
export const withoutAcrossTenantIndexes = (spec: CollectionSpec<any>): CollectionSpec<any> => {
  const { acrossTenantIndexes: _, ...rest } = spec
  return rest
}

/** The statement `listAcrossTenants` runs for the scan (its text and parameters). */
export const scanStatement = (dialect: Dialect, scan: AcrossTenantScan) => {
  const shape = shapeOf(scan.spec)
  const params: Array<unknown> = []
  const clause = whereSql(dialect, shape, scan.query, undefined, params)
  const text = `SELECT account_id, environment, doc FROM ${quote(tableOf(scan.spec))} ${clause} ` +
    `${orderSql(dialect, shape.keys)}, account_id, environment${limitSql(scan.query.limit)}`
  return { text, params }
}

/** A few rows of two tenants, stored through `spec`. */
export const fillForScan = (storage: Storage["Type"], spec: CollectionSpec<any>, scan: AcrossTenantScan) =>
  Effect.forEach(
    [tenantA, tenantB],
    (tenant, t) =>
      Effect.forEach([0, 1, 2], (n) => storage.collection(spec).insert(scan.doc(`${spec.name}_${t}_${n}`, n)).pipe(as(tenant))),
    {
      discard: true
    }
  )
