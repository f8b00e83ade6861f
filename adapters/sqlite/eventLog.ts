/**
 * The SQLite event log (the outbox): one `events` table keyed by a seq that is never reused,
 * even after a tenant's events are erased (see migrations.ts). Appends go through the
 * caller's transaction, so an event commits with the write that caused it, and take their
 * seqs from the transaction's count (`withNextSeq`): the log's highest seq is read once per
 * SQLite transaction, not by every INSERT.
 */
import { Option } from "effect"
import type { Event } from "../../src/events/catalogue.js"
import type { EventLog, StoredEvent } from "../../src/ports/storage.js"
import type { TenantId } from "../../src/ports/tenant.js"
import { execute, limitSql, parsed, type Statements } from "./query.js"
import type { Transactions } from "./transactions.js"

/**
 * The log's highest seq so far, erased events included (like the reference adapter's counter,
 * so a seq is never handed out twice).
 */
const LAST_SEQ = "max(COALESCE((SELECT max(seq) FROM events), 0), " +
  "COALESCE((SELECT value FROM slotwise_sequences WHERE name = 'events'), 0))"
const SELECT_LAST_SEQ = `SELECT ${LAST_SEQ} AS seq`
const APPEND_EVENT = "INSERT INTO events (seq, account_id, environment, id, type, doc) VALUES (?, ?, ?, ?, ?, ?)"
/** Before events are erased: their highest seq stays taken. */
const REMEMBER_LAST_SEQ = "INSERT INTO slotwise_sequences (name, value) " +
  "SELECT 'events', seq FROM events WHERE seq = (SELECT max(seq) FROM events) " +
  "ON CONFLICT (name) DO UPDATE SET value = max(value, excluded.value)"

interface EventRow {
  readonly seq: number
  readonly account_id: string
  readonly environment: TenantId["environment"]
  readonly doc: string
}

const storedEvent = (row: EventRow, tenant?: TenantId): StoredEvent => ({
  seq: row.seq,
  tenant: tenant ?? { account_id: row.account_id, environment: row.environment },
  event: JSON.parse(row.doc) as Event
})

const parseEvents = (rows: ReadonlyArray<EventRow>, tenant?: TenantId): Array<StoredEvent> =>
  parsed("events", () => rows.map((row) => storedEvent(row, tenant)))

const lastSeqOf = (statements: Statements, what: string): number => Number(execute(statements, SELECT_LAST_SEQ, [], what)[0]?.seq ?? 0)

export const makeEventLog = ({ acrossTenants, forTenant, withNextSeq, write }: Transactions): EventLog => ({
  append: (event) =>
    write((statements, tenant) => {
      withNextSeq(() => lastSeqOf(statements, "events: append"), (seq) =>
        execute(
          statements,
          APPEND_EVENT,
          [seq, tenant.account_id, tenant.environment, event.id, event.type, JSON.stringify(event)],
          "events: append"
        ))
    }),
  get: (id) =>
    forTenant((statements, tenant) => {
      const rows = execute(
        statements,
        "SELECT seq, account_id, environment, doc FROM events WHERE id = ? AND account_id = ? AND environment = ?",
        [id, tenant.account_id, tenant.environment],
        "events: get"
      )
      return Option.map(Option.fromNullable(parseEvents(rows, tenant)[0]), (stored) => stored.event)
    }),
  read: ({ after, limit, types }) =>
    forTenant((statements, tenant) => {
      const params: Array<unknown> = [tenant.account_id, tenant.environment, after]
      let filter = ""
      if (types !== undefined) {
        filter = types.length === 0 ? " AND 0" : ` AND type IN (${types.map(() => "?").join(", ")})`
        params.push(...types)
      }
      const rows = execute(
        statements,
        "SELECT seq, account_id, environment, doc FROM events " +
          `WHERE account_id = ? AND environment = ? AND seq > ?${filter} ORDER BY seq${limitSql(limit)}`,
        params,
        "events: read"
      )
      return parseEvents(rows, tenant)
    }),
  lastSeq: acrossTenants((statements) => lastSeqOf(statements, "events: lastSeq")),
  readAcrossTenants: ({ after, limit }) =>
    acrossTenants((statements) =>
      parseEvents(
        execute(
          statements,
          `SELECT seq, account_id, environment, doc FROM events WHERE seq > ? ORDER BY seq${limitSql(limit)}`,
          [after],
          "events: readAcrossTenants"
        )
      )
    )
})

/** Deletes the tenant's events (inside a write), keeping the log's highest seq taken. */
export const eraseTenantEvents = (statements: Statements, tenant: TenantId): void => {
  execute(statements, REMEMBER_LAST_SEQ, [], "eraseTenant: keep the events high-water mark")
  execute(
    statements,
    "DELETE FROM events WHERE account_id = ? AND environment = ?",
    [tenant.account_id, tenant.environment],
    "eraseTenant: events"
  )
}
