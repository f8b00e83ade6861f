/**
 * The SQLite schema, derived from the collection specs. Every step is idempotent and checks
 * the live schema (`pragma_table_info`) rather than trusting the bookkeeping table, so it is
 * safe to run on every start and whenever a new spec shows up; callers run it inside a
 * `BEGIN IMMEDIATE` transaction, so two processes opening one new file never race.
 *
 * - `slotwise_migrations(id, applied_at)`: one row per applied step (table created, column
 *   added), for operators; never read to decide what to do.
 * - `events`: the outbox; `slotwise_sequences` keeps the high-water mark of erased events so a
 *   sequence number is never reused.
 * - `c_<name>` per collection (WITHOUT ROWID): tenant, id, one column per declared index, the
 *   JSON document last; an index `(account_id, environment, <columns…>, id)` per storage index
 *   and one on the order columns. A spec that grows an index gets the column added and
 *   back-filled. Tables and logs of the earlier layout (rowid tables, AUTOINCREMENT) are
 *   rebuilt in place.
 */
import { Effect } from "effect"
import type { StorageFailure } from "../../src/domain/errors.js"
import type { CollectionSpec } from "../../src/ports/storage.js"
import { sqliteDialect } from "../sql/dialects.js"
import {
  backfill,
  type MigrationDialect,
  migrateCollection as migrateCollectionIn,
  record as recordIn,
  type Run
} from "../sql/migrations.js"
import { quote, tableOf } from "../sql/query.js"

export type { Run }
export { quote, tableOf }

const sqlType = (type: "text" | "integer"): string => (type === "integer" ? "INTEGER" : "TEXT")

const record = (run: Run, id: string) => recordIn(sqlite, run, id)

const EVENTS_TABLE = (name: string) =>
  `CREATE TABLE ${name} (
    seq INTEGER PRIMARY KEY,
    account_id TEXT NOT NULL,
    environment TEXT NOT NULL,
    id TEXT NOT NULL UNIQUE,
    type TEXT NOT NULL,
    doc TEXT NOT NULL
  )`

/** The text SQLite keeps for a table, or undefined when there is no such table. */
const tableSql = (run: Run, table: string) =>
  Effect.map(
    run("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?", [table], `inspect ${table}`),
    (rows) => rows[0]?.sql as string | undefined
  )

/**
 * The bookkeeping tables and the event log. `seq` is the log's rowid: a new event takes the
 * highest seq so far plus one, where "so far" includes erased events, whose high-water mark
 * `eraseTenant` leaves in `slotwise_sequences`. That keeps seqs unique forever without
 * AUTOINCREMENT, whose `sqlite_sequence` row is one more page for every commit to write.
 */
export const migrateBase = (run: Run): Effect.Effect<void, StorageFailure> =>
  Effect.gen(function*() {
    yield* run(
      "CREATE TABLE IF NOT EXISTS slotwise_migrations (id TEXT PRIMARY KEY, applied_at INTEGER NOT NULL)",
      [],
      "create slotwise_migrations"
    )
    yield* run(
      "CREATE TABLE IF NOT EXISTS slotwise_sequences (name TEXT PRIMARY KEY, value INTEGER NOT NULL)",
      [],
      "create slotwise_sequences"
    )
    const existing = yield* tableSql(run, "events")
    if (existing === undefined) {
      yield* run(EVENTS_TABLE("events"), [], "create events")
      yield* record(run, "events")
    } else if (/AUTOINCREMENT/i.test(existing)) {
      // A log made before the high-water mark: keep AUTOINCREMENT's mark, then rebuild.
      yield* run(
        "INSERT INTO slotwise_sequences (name, value) SELECT 'events', seq FROM sqlite_sequence WHERE name = 'events' " +
          "ON CONFLICT (name) DO UPDATE SET value = max(value, excluded.value)",
        [],
        "keep the events high-water mark"
      )
      yield* run(EVENTS_TABLE("events_rebuilt"), [], "create events_rebuilt")
      yield* run(
        "INSERT INTO events_rebuilt (seq, account_id, environment, id, type, doc) " +
          "SELECT seq, account_id, environment, id, type, doc FROM events",
        [],
        "copy events"
      )
      yield* run("DROP TABLE events", [], "drop the old events")
      yield* run("ALTER TABLE events_rebuilt RENAME TO events", [], "rename events_rebuilt")
      yield* record(run, "events.without_autoincrement")
    }
    yield* run(
      "CREATE INDEX IF NOT EXISTS ix_events_tenant ON events (account_id, environment, seq)",
      [],
      "create events index"
    )
  })

/** Creates the collection's table, or adds (and back-fills) the index columns it lacks. */
export const migrateCollection = (run: Run, spec: CollectionSpec<any>): Effect.Effect<void, StorageFailure> =>
  migrateCollectionIn(sqlite, run, spec)

/**
 * A collection's table: tenant, id, one column per declared index, the JSON document last
 * (so reading a row's index columns never walks past it). WITHOUT ROWID, keyed by tenant and
 * id: a rowid table would add a separate primary-key index, one more page for every insert
 * to write; index scans that need more than their index read the row by that key.
 */
const createTable = (spec: CollectionSpec<any>, table: string): string => {
  const columns = [
    "account_id TEXT NOT NULL",
    "environment TEXT NOT NULL",
    "id TEXT NOT NULL",
    ...Object.entries(spec.indexes).map(([column, ix]) => `${quote(column)} ${sqlType(ix.type)}`),
    "doc TEXT NOT NULL",
    "PRIMARY KEY (account_id, environment, id)"
  ]
  return `CREATE TABLE ${quote(table)} (${columns.join(", ")}) WITHOUT ROWID`
}

/**
 * A table made before collections were WITHOUT ROWID: rebuilt, keeping the documents and
 * re-deriving every index column from them.
 */
const upgradeTable = (run: Run, spec: CollectionSpec<any>, table: string) =>
  Effect.gen(function*() {
    if (/WITHOUT ROWID/i.test((yield* tableSql(run, table)) ?? "")) return false
    const rebuilt = `${table}__rebuilt`
    yield* run(createTable(spec, rebuilt), [], `create ${rebuilt}`)
    yield* run(
      `INSERT INTO ${quote(rebuilt)} (account_id, environment, id, doc) SELECT account_id, environment, id, doc FROM ${quote(table)}`,
      [],
      `copy ${table}`
    )
    yield* run(`DROP TABLE ${quote(table)}`, [], `drop the old ${table}`)
    yield* run(`ALTER TABLE ${quote(rebuilt)} RENAME TO ${quote(table)}`, [], `rename ${rebuilt}`)
    yield* backfill(sqlite, run, spec, Object.keys(spec.indexes))
    yield* record(run, `${table}.without_rowid`)
    return true
  })

const sqlite: MigrationDialect = {
  ...sqliteDialect,
  reportedType: sqlType,
  columnType: sqlType,
  createTable,
  columnsOf: (run, table) =>
    Effect.map(
      run("SELECT name, type FROM pragma_table_info(?)", [table], `inspect ${table}`),
      (rows) => rows.map((c: { name: string; type: string }) => ({ name: c.name, type: c.type.toUpperCase() }))
    ),
  upgradeTable,
  // Named apart from the tenant's index on the same columns.
  indexName: (table, group, acrossTenants) => `ix_${table}_${group.join("__")}${acrossTenants ? "___across_tenants" : ""}`,
  indexesOf: (run, table) =>
    Effect.map(
      run(
        "SELECT name, partial FROM pragma_index_list(?) WHERE substr(name, 1, 3) = 'ix_'",
        [table],
        `list ${table} indexes`
      ),
      (rows) => rows.map((row: { name: string; partial: number }) => ({ name: row.name, partial: row.partial === 1 }))
    ),
  recordMigration: "INSERT OR IGNORE INTO slotwise_migrations (id, applied_at) VALUES (?, ?)",
  fillField: (table, field, json) => [
    `UPDATE ${table} SET doc = json_set(doc, ?, json(?)) WHERE json_type(doc, ?) IS NULL`,
    [`$.${field}`, json, `$.${field}`]
  ],
  fillListField: (table, field, source) => [
    `UPDATE ${table} SET doc = json_set(doc, ?, json_array(json_extract(doc, ?))) WHERE json_type(doc, ?) IS NULL`,
    [`$.${field}`, `$.${source}`, `$.${field}`]
  ],
  fillRelatedField: (table, field, related, fallback) => {
    const path = `$.${field}`
    const on = related.match.map(([theirs, ours]) => `r.${theirs} = ${table}.${ours}`).join(" AND ")
    const [otherwise, params] = "json" in fallback
      ? ["json(?)", [fallback.json]]
      : ["json_array(json_extract(doc, ?))", [`$.${fallback.listOf}`]]
    return [
      `UPDATE ${table} SET doc = json_set(doc, ?, json(coalesce((SELECT r.doc -> ? FROM ${related.table} AS r ` +
      `WHERE r.account_id = ${table}.account_id AND r.environment = ${table}.environment AND ${on} ` +
      `ORDER BY r.${related.orderBy}, r.id LIMIT 1), ${otherwise}))) WHERE json_type(doc, ?) IS NULL`,
      [path, path, ...params, path]
    ]
  },
  documentOf: (stored) => JSON.parse(stored as string),
  // LIKE ignores ASCII case; the backslash is no escape character without ESCAPE.
  mayEscapeSurrogate: "doc LIKE '%\\ud%'"
}
