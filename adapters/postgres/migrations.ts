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
import { Effect, Either } from "effect"
import { StorageFailure } from "../../src/domain/errors.js"
import { indexColumnsToAdd, indexValuesOf, specProblem, storageIndexGroups } from "../../src/ports/specs.js"
import { type CollectionSpec, ListOfField } from "../../src/ports/storage.js"
import { quote, tableOf } from "./query.js"

/** Runs one statement on the migration's connection. */
export type Run = (
  sql: string,
  params: ReadonlyArray<unknown>,
  what: string
) => Effect.Effect<ReadonlyArray<any>, StorageFailure>

const sqlType = (type: "text" | "integer"): string => (type === "integer" ? "bigint" : "text")

/** Keeps `ix_c_<name>_<hash>` (see indexName) within PostgreSQL's 63-byte identifiers. */
const MAX_COLLECTION_NAME = 40

/** Index names within PostgreSQL's 63 bytes: the table and a hash of the columns. */
const indexName = (table: string, group: ReadonlyArray<string>): string => {
  let h = 0x811c9dc5
  for (const ch of group.join(",")) h = Math.imul(h ^ ch.charCodeAt(0), 0x01000193) >>> 0
  return `ix_${table}_${h.toString(16).padStart(8, "0")}`
}

const record = (run: Run, id: string) =>
  run(
    "INSERT INTO slotwise_migrations (id, applied_at) VALUES ($1, $2) ON CONFLICT (id) DO NOTHING",
    [id, Date.now()],
    `record migration ${id}`
  )

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
  Effect.gen(function*() {
    const problem = specProblem(spec, { maxNameLength: MAX_COLLECTION_NAME })
    if (problem !== undefined) return yield* Effect.fail(new StorageFailure({ detail: problem }))
    const table = tableOf(spec)
    const existing = (yield* run(
      "SELECT column_name AS name, data_type AS type FROM information_schema.columns " +
        "WHERE table_schema = current_schema() AND table_name = $1",
      [table],
      `inspect ${table}`
    )) as ReadonlyArray<{ readonly name: string; readonly type: string }>

    const created = existing.length === 0
    if (created) {
      yield* run(createTable(spec, table), [], `create ${table}`)
      yield* record(run, table)
    } else {
      const types = new Map(existing.map((c) => [c.name, c.type]))
      const missing = yield* Either.mapLeft(
        indexColumnsToAdd(spec, table, types, sqlType),
        (detail) => new StorageFailure({ detail })
      )
      for (const column of missing) {
        yield* run(
          `ALTER TABLE ${quote(table)} ADD COLUMN ${quote(column)} ${columnType(spec.indexes[column]!.type)}`,
          [],
          `add ${table}.${column}`
        )
      }
      if (missing.length > 0) yield* backfill(run, spec, missing)
      for (const column of missing) yield* record(run, `${table}.${column}`)
    }

    yield* fillAddedFields(run, spec, created)

    const wanted = new Map(storageIndexGroups(spec).map((group) => [indexName(table, group), group]))
    const present = new Set(
      ((yield* run(
        "SELECT indexname AS name FROM pg_indexes WHERE schemaname = current_schema() AND tablename = $1 " +
          "AND indexname LIKE 'ix\\_%'",
        [table],
        `list ${table} indexes`
      )) as ReadonlyArray<{ readonly name: string }>).map((row) => row.name)
    )
    for (const [name, group] of wanted) {
      if (present.has(name)) continue
      yield* run(
        `CREATE INDEX ${quote(name)} ON ${quote(table)} ` +
          `(account_id, environment, ${group.map((c) => `${quote(c)} NULLS FIRST`).join(", ")}, id)`,
        [],
        `index ${table}.${group.join(",")}`
      )
    }
    // Indexes the spec no longer names only slow writes down.
    for (const name of present) {
      if (!wanted.has(name)) yield* run(`DROP INDEX IF EXISTS ${quote(name)}`, [], `drop index ${name}`)
    }
  })

/**
 * Writes each of the spec's added fields into the documents stored without it. Unlike a
 * column, a field missing from some documents cannot be seen without reading them all, so
 * this step alone goes by the bookkeeping table: it runs once per field (a table created
 * with the field known holds no earlier documents).
 */
const fillAddedFields = (run: Run, spec: CollectionSpec<any>, created: boolean) =>
  Effect.gen(function*() {
    const table = tableOf(spec)
    for (const [field, value] of Object.entries(spec.addedFields ?? {})) {
      const step = `${table}.doc.${field}`
      if (!created) {
        const done = yield* run("SELECT 1 FROM slotwise_migrations WHERE id = $1", [step], `check ${step}`)
        if (done.length > 0) continue
        if (value instanceof ListOfField) {
          yield* run(
            `UPDATE ${quote(table)} SET doc = (doc::jsonb || jsonb_build_object($1::text, jsonb_build_array(doc::jsonb -> $2::text)))::json WHERE doc -> $1 IS NULL`,
            [field, value.field],
            `fill ${step}`
          )
          yield* record(run, step)
          continue
        }
        yield* run(
          `UPDATE ${quote(table)} SET doc = (doc::jsonb || jsonb_build_object($1::text, $2::jsonb))::json WHERE doc -> $1 IS NULL`,
          [field, JSON.stringify(value)],
          `fill ${step}`
        )
      }
      yield* record(run, step)
    }
  })

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

/** Fills newly added index columns from each row's document, with the spec's getters. */
const backfill = (run: Run, spec: CollectionSpec<any>, columns: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const table = tableOf(spec)
    const rows = (yield* run(
      `SELECT account_id, environment, id, doc FROM ${quote(table)}`,
      [],
      `read ${table} for back-fill`
    )) as ReadonlyArray<{ account_id: string; environment: string; id: string; doc: unknown }>
    const n = columns.length
    const update = `UPDATE ${quote(table)} SET ${columns.map((c, i) => `${quote(c)} = $${i + 1}`).join(", ")} ` +
      `WHERE account_id = $${n + 1} AND environment = $${n + 2} AND id = $${n + 3}`
    for (const row of rows) {
      const values = yield* Effect.try({
        try: () => indexValuesOf(spec, columns, row.doc),
        catch: (cause) =>
          new StorageFailure({ detail: `${table}: back-fill of ${columns.join(", ")} failed on ${row.id}`, cause })
      })
      yield* run(update, [...values, row.account_id, row.environment, row.id], `back-fill ${table}`)
    }
  })
