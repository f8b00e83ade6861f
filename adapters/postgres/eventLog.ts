/**
 * The event log. A poller that stored `after = 10` must never miss a 9 that commits later,
 * so a seq is handed out in commit order: an append takes the next value of the counter row
 * `slotwise_sequences('events')` by updating it. The row lock that update takes is held to
 * the end of the transaction, so appends of concurrent transactions queue on it, and the
 * next one reads the counter only after the previous transaction is committed and visible.
 * Seq order is therefore commit order. The counter rolls back with its transaction (a failed
 * write leaves `lastSeq` as it was) and is never lowered, so erased events' seqs are not
 * reused. The lock is taken at a transaction's first append and held only to its commit;
 * the core appends last, so transactions overlap everywhere else.
 */
import { Effect, Option } from "effect"
import type { Event } from "../../src/events/catalogue.js"
import type { EventLog, StoredEvent } from "../../src/ports/storage.js"
import type { TenantId } from "../../src/ports/tenant.js"
import { limitSql } from "./query.js"
import type { Sql } from "./transactions.js"

const APPEND = "WITH next AS (UPDATE slotwise_sequences SET value = value + 1 WHERE name = 'events' RETURNING value) " +
  "INSERT INTO events (seq, account_id, environment, id, type, doc) " +
  "SELECT value, $1::text, $2::text, $3::text, $4::text, $5::json FROM next"

interface EventRow {
  readonly seq: number
  readonly account_id: string
  readonly environment: TenantId["environment"]
  readonly doc: Event
}

const stored = (row: EventRow): StoredEvent => ({
  seq: row.seq,
  tenant: { account_id: row.account_id, environment: row.environment },
  event: row.doc
})

export const makeEventLog = (sql: Sql): EventLog => ({
  append: (event) =>
    sql.write((tenant) =>
      Effect.asVoid(
        sql.query(APPEND, [tenant.account_id, tenant.environment, event.id, event.type, JSON.stringify(event)], "events: append")
      )
    ),
  get: (id) =>
    sql.forTenant((tenant) =>
      Effect.map(
        sql.query<{ doc: Event }>(
          "SELECT doc FROM events WHERE id = $1 AND account_id = $2 AND environment = $3",
          [id, tenant.account_id, tenant.environment],
          "events: get"
        ),
        (rows) => Option.fromNullable(rows[0]?.doc)
      )
    ),
  read: ({ after, limit, types }) =>
    sql.forTenant((tenant) => {
      if (types !== undefined && types.length === 0) return Effect.succeed([])
      const params: Array<unknown> = [tenant.account_id, tenant.environment, after]
      if (types !== undefined) params.push(types)
      return Effect.map(
        sql.query<EventRow>(
          "SELECT seq, account_id, environment, doc FROM events WHERE account_id = $1 AND environment = $2 " +
            `AND seq > $3${types === undefined ? "" : " AND type = ANY($4::text[])"} ORDER BY seq${limitSql(limit)}`,
          params,
          "events: read"
        ),
        (rows) => rows.map(stored)
      )
    }),
  lastSeq: Effect.map(
    sql.query<{ value: number }>("SELECT value FROM slotwise_sequences WHERE name = 'events'", [], "events: lastSeq"),
    (rows) => rows[0]?.value ?? 0
  ),
  readAcrossTenants: ({ after, limit }) =>
    Effect.map(
      sql.query<EventRow>(
        `SELECT seq, account_id, environment, doc FROM events WHERE seq > $1 ORDER BY seq${limitSql(limit)}`,
        [after],
        "events: readAcrossTenants"
      ),
      (rows) => rows.map(stored)
    )
})
