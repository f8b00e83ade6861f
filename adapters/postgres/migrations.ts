/**
 * The PostgreSQL schema, derived from the collection specs. Every step is idempotent and
 * checks the live catalogue rather than the bookkeeping table, so it runs on every start and
 * whenever a new spec shows up. Callers run it in one transaction under
 * `pg_advisory_xact_lock` (layer.ts), so instances starting together migrate once: DDL is
 * transactional here, and the second instance finds the tables made.
 *
 * - `slotwise_migrations(id, applied_at)`: one row per applied step, for operators.
 * - `slotwise_sequences`: the event log's counter (see eventLog.ts).
 * - `events`: the outbox, keyed by `seq`.
 * - `c_<name>` per collection: tenant, id, one column per declared index (`text` or
 *   `bigint`), the JSON document last; text columns compare byte-wise (`COLLATE "C"`) like
 *   the reference adapter's string order. An index `(account_id, environment, <columns…>,
 *   id)` per storage index and one on the order columns, nulls first like `ORDER BY`.
 */
import { Effect } from "effect"
import type { StorageFailure } from "../../src/domain/errors.js"
import type { CollectionSpec } from "../../src/ports/storage.js"
import { postgresDialect } from "../sql/dialects.js"
import { type MigrationDialect, migrateCollection as migrateCollectionIn, record as recordIn, type Run } from "../sql/migrations.js"
import { quote } from "../sql/query.js"

export type { Run }

const sqlType = (type: "text" | "integer"): string => (type === "integer" ? "bigint" : "text")

/** Keeps `ix_c_<name>_<hash>` (see indexName) within PostgreSQL's 63-byte identifiers. */
const MAX_COLLECTION_NAME = 40

/** Index names within PostgreSQL's 63 bytes: the table and a hash of the columns. */
const indexName = (table: string, group: ReadonlyArray<string>, acrossTenants: boolean): string => {
  let h = 0x811c9dc5
  for (const ch of `${group.join(",")}${acrossTenants ? ";across tenants" : ""}`) h = Math.imul(h ^ ch.charCodeAt(0), 0x01000193) >>> 0
  return `ix_${table}_${h.toString(16).padStart(8, "0")}`
}

const record = (run: Run, id: string) => recordIn(postgres, run, id)

const tableExists = (run: Run, table: string) =>
  Effect.map(
    run(
      "SELECT 1 FROM information_schema.tables WHERE table_schema = current_schema() AND table_name = $1",
      [table],
      `inspect ${table}`
    ),
    (rows) => rows.length > 0
  )

/** The schema (when named), the bookkeeping tables and the event log. */
export const migrateBase = (run: Run, schema: string | undefined): Effect.Effect<void, StorageFailure> =>
  Effect.gen(function*() {
    if (schema !== undefined) yield* run(`CREATE SCHEMA IF NOT EXISTS ${quote(schema)}`, [], "create schema")
    yield* run(
      "CREATE TABLE IF NOT EXISTS slotwise_migrations (id text PRIMARY KEY, applied_at bigint NOT NULL)",
      [],
      "create slotwise_migrations"
    )
    yield* run(
      "CREATE TABLE IF NOT EXISTS slotwise_sequences (name text PRIMARY KEY, value bigint NOT NULL)",
      [],
      "create slotwise_sequences"
    )
    yield* run(
      "INSERT INTO slotwise_sequences (name, value) VALUES ('events', 0) ON CONFLICT (name) DO NOTHING",
      [],
      "start the events counter"
    )
    if (!(yield* tableExists(run, "events"))) {
      yield* run(
        `CREATE TABLE events (
          seq bigint PRIMARY KEY,
          account_id text COLLATE "C" NOT NULL,
          environment text COLLATE "C" NOT NULL,
          id text COLLATE "C" NOT NULL UNIQUE,
          type text COLLATE "C" NOT NULL,
          doc json NOT NULL
        )`,
        [],
        "create events"
      )
      yield* run("CREATE INDEX ix_events_tenant ON events (account_id, environment, seq)", [], "create events index")
      yield* record(run, "events")
    }
  })

/** Creates the collection's table, or adds (and back-fills) the index columns it lacks. */
export const migrateCollection = (run: Run, spec: CollectionSpec<any>): Effect.Effect<void, StorageFailure> =>
  migrateCollectionIn(postgres, run, spec)

const columnType = (type: "text" | "integer"): string => (type === "integer" ? "bigint" : `text COLLATE "C"`)

/** A collection's table: tenant, id, one column per declared index, the JSON document last. */
const createTable = (spec: CollectionSpec<any>, table: string): string => {
  const columns = [
    `account_id text COLLATE "C" NOT NULL`,
    `environment text COLLATE "C" NOT NULL`,
    `id text COLLATE "C" NOT NULL`,
    ...Object.entries(spec.indexes).map(([column, ix]) => `${quote(column)} ${columnType(ix.type)}`),
    "doc json NOT NULL",
    "PRIMARY KEY (account_id, environment, id)"
  ]
  return `CREATE TABLE ${quote(table)} (${columns.join(", ")})`
}

const postgres: MigrationDialect = {
  ...postgresDialect,
  maxCollectionName: MAX_COLLECTION_NAME,
  reportedType: sqlType,
  columnType,
  createTable,
  columnsOf: (run, table) =>
    run(
      "SELECT column_name AS name, data_type AS type FROM information_schema.columns " +
        "WHERE table_schema = current_schema() AND table_name = $1",
      [table],
      `inspect ${table}`
    ),
  indexName,
  indexesOf: (run, table) =>
    Effect.map(
      run(
        "SELECT c.relname AS name, i.indpred IS NOT NULL AS partial FROM pg_index i " +
          "JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_class t ON t.oid = i.indrelid " +
          "JOIN pg_namespace n ON n.oid = t.relnamespace " +
          "WHERE n.nspname = current_schema() AND t.relname = $1 AND c.relname LIKE 'ix\\_%'",
        [table],
        `list ${table} indexes`
      ),
      (rows) => rows.map((row: { name: string; partial: boolean }) => ({ name: row.name, partial: row.partial }))
    ),
  recordMigration: "INSERT INTO slotwise_migrations (id, applied_at) VALUES ($1, $2) ON CONFLICT (id) DO NOTHING",
  fillField: (table, field, json) => [
    `UPDATE ${table} SET doc = (doc::jsonb || jsonb_build_object($1::text, $2::jsonb))::json WHERE doc -> $1 IS NULL`,
    [field, json]
  ],
  fillListField: (table, field, source) => [
    `UPDATE ${table} SET doc = (doc::jsonb || jsonb_build_object($1::text, jsonb_build_array(doc::jsonb -> $2::text)))::json WHERE doc -> $1 IS NULL`,
    [field, source]
  ],
  fillRelatedField: (table, field, related, fallback) => {
    const on = related.match.map(([theirs, ours]) => `r.${theirs} = ${table}.${ours}`).join(" AND ")
    const otherwise = "json" in fallback ? "$2::jsonb" : "jsonb_build_array(doc::jsonb -> $2::text)"
    return [
      `UPDATE ${table} SET doc = (doc::jsonb || jsonb_build_object($1::text, coalesce((SELECT r.doc::jsonb -> $1::text ` +
      `FROM ${related.table} AS r WHERE r.account_id = ${table}.account_id AND r.environment = ${table}.environment ` +
      `AND ${on} ORDER BY r.${related.orderBy}, r.id LIMIT 1), ${otherwise})))::json WHERE doc -> $1 IS NULL`,
      [field, "json" in fallback ? fallback.json : fallback.listOf]
    ]
  },
  // The driver parses `json` columns already.
  documentOf: (stored) => stored,
  // The text as stored: casting `json` to text does not parse it.
  mayEscapeSurrogate: "doc::text ~* '\\\\ud[89a-f]'"
}
