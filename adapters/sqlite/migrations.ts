/**
 * The SQLite schema, derived from the collection specs. Every step is idempotent and checks
 * the live schema (`pragma_table_info`) rather than trusting the bookkeeping table, so it is
 * safe to run on every start and whenever a new spec shows up; callers run it inside a
 * `BEGIN IMMEDIATE` transaction, so two processes opening one new file never race.
 *
 * - `slotwise_migrations(id, applied_at)`: one row per applied step (table created, column
 *   added), for operators; never read to decide what to do.
 * - `events`: the outbox, `seq` AUTOINCREMENT so a sequence number is never reused.
 * - `c_<name>` per collection: tenant, id, one column per declared index, the JSON document
 *   last; an index `(account_id, environment, <column>, id)` per index column and one on the
 *   order columns. A spec that grows an index gets the column added and back-filled.
 */
import { Effect } from "effect"
import { StorageFailure } from "../../src/domain/errors.js"
import type { CollectionSpec } from "../../src/ports/storage.js"

/** Runs one statement on the connection of the open transaction. */
export type Run = (
  sql: string,
  params: ReadonlyArray<unknown>,
  what: string
) => Effect.Effect<ReadonlyArray<any>, StorageFailure>

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/
const RESERVED = new Set(["account_id", "environment", "id", "doc"])

export const tableOf = (spec: CollectionSpec<any>): string => `c_${spec.name}`

/** Identifiers are validated by `checkSpec`; quoting keeps keywords (`type`, `order`) legal. */
export const quote = (identifier: string): string => `"${identifier}"`

const sqlType = (type: "text" | "integer"): string => (type === "integer" ? "INTEGER" : "TEXT")

/** Why a spec cannot be mapped to a table, if it cannot. */
export const checkSpec = (spec: CollectionSpec<any>): string | undefined => {
  if (!IDENTIFIER.test(spec.name)) return `collection name ${JSON.stringify(spec.name)} is not an identifier`
  for (const column of Object.keys(spec.indexes)) {
    if (!IDENTIFIER.test(column)) return `${spec.name}: index ${JSON.stringify(column)} is not an identifier`
    if (RESERVED.has(column)) return `${spec.name}: index ${JSON.stringify(column)} is a reserved column`
  }
  for (const column of spec.order) {
    if (!(column in spec.indexes)) return `${spec.name}: order column ${JSON.stringify(column)} is not an index`
  }
  for (const group of spec.storageIndexes ?? []) {
    const unknown = group.find((column) => !(column in spec.indexes))
    if (group.length === 0 || unknown !== undefined) {
      return `${spec.name}: storage index ${JSON.stringify(group)} names no declared index column`
    }
  }
  return undefined
}

const record = (run: Run, id: string) =>
  run(
    "INSERT OR IGNORE INTO slotwise_migrations (id, applied_at) VALUES (?, ?)",
    [id, Date.now()],
    `record migration ${id}`
  )

/** The bookkeeping table and the event log. */
export const migrateBase = (run: Run): Effect.Effect<void, StorageFailure> =>
  Effect.gen(function*() {
    yield* run(
      "CREATE TABLE IF NOT EXISTS slotwise_migrations (id TEXT PRIMARY KEY, applied_at INTEGER NOT NULL)",
      [],
      "create slotwise_migrations"
    )
    const existing = yield* run("SELECT 1 FROM pragma_table_info('events')", [], "inspect events")
    if (existing.length > 0) return
    yield* run(
      `CREATE TABLE events (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        account_id TEXT NOT NULL,
        environment TEXT NOT NULL,
        id TEXT NOT NULL UNIQUE,
        type TEXT NOT NULL,
        doc TEXT NOT NULL
      )`,
      [],
      "create events"
    )
    yield* run(
      "CREATE INDEX IF NOT EXISTS ix_events_tenant ON events (account_id, environment, seq)",
      [],
      "create events index"
    )
    yield* record(run, "events")
  })

/** Creates the collection's table, or adds (and back-fills) the index columns it lacks. */
export const migrateCollection = (run: Run, spec: CollectionSpec<any>): Effect.Effect<void, StorageFailure> =>
  Effect.gen(function*() {
    const problem = checkSpec(spec)
    if (problem !== undefined) return yield* Effect.fail(new StorageFailure({ detail: problem }))
    const table = tableOf(spec)
    const indexes = Object.entries(spec.indexes)
    const existing = (yield* run(
      "SELECT name, type FROM pragma_table_info(?)",
      [table],
      `inspect ${table}`
    )) as ReadonlyArray<{ readonly name: string; readonly type: string }>

    if (existing.length === 0) {
      const columns = [
        "account_id TEXT NOT NULL",
        "environment TEXT NOT NULL",
        "id TEXT NOT NULL",
        ...indexes.map(([column, ix]) => `${quote(column)} ${sqlType(ix.type)}`),
        // Last, so reading the index columns of a row never walks past the document.
        "doc TEXT NOT NULL",
        "PRIMARY KEY (account_id, environment, id)"
      ]
      // A rowid table, not WITHOUT ROWID: documents are large, and index scans that read a
      // row's index columns by rowid measured 1.5-3x faster than through the text key.
      yield* run(`CREATE TABLE ${quote(table)} (${columns.join(", ")})`, [], `create ${table}`)
      yield* record(run, table)
    } else {
      const types = new Map(existing.map((c) => [c.name, c.type.toUpperCase()]))
      const missing = indexes.filter(([column]) => !types.has(column))
      for (const [column, ix] of indexes) {
        const type = types.get(column)
        if (type !== undefined && type !== sqlType(ix.type)) {
          return yield* Effect.fail(
            new StorageFailure({
              detail: `${table}.${column} is ${type} but the spec declares ${ix.type}; migrate it by hand`
            })
          )
        }
      }
      if (missing.length > 0) {
        for (const [column, ix] of missing) {
          yield* run(
            `ALTER TABLE ${quote(table)} ADD COLUMN ${quote(column)} ${sqlType(ix.type)}`,
            [],
            `add ${table}.${column}`
          )
        }
        yield* backfill(run, spec, missing.map(([column]) => column))
        for (const [column] of missing) yield* record(run, `${table}.${column}`)
      }
    }

    const groups = spec.storageIndexes ?? indexes.map(([column]) => [column])
    // The order index; a single order column already indexed alone needs no second copy.
    const withOrder = spec.order.length === 0 || groups.some((g) => g.join() === spec.order.join())
      ? groups
      : [...groups, spec.order]
    const wanted = new Map(withOrder.map((group) => [`ix_${table}_${group.join("__")}`, group]))
    for (const [name, group] of wanted) {
      yield* run(
        `CREATE INDEX IF NOT EXISTS ${quote(name)} ON ${quote(table)} ` +
          `(account_id, environment, ${group.map(quote).join(", ")}, id)`,
        [],
        `index ${table}.${group.join(",")}`
      )
    }
    // Indexes the spec no longer names only slow writes down.
    const present = (yield* run(
      "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = ? AND substr(name, 1, 3) = 'ix_'",
      [table],
      `list ${table} indexes`
    )) as ReadonlyArray<{ readonly name: string }>
    for (const { name } of present) {
      if (!wanted.has(name)) yield* run(`DROP INDEX IF EXISTS ${quote(name)}`, [], `drop index ${name}`)
    }
  })

/** Fills newly added index columns from each row's document, with the spec's getters. */
const backfill = (run: Run, spec: CollectionSpec<any>, columns: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const table = tableOf(spec)
    const rows = (yield* run(
      `SELECT account_id, environment, id, doc FROM ${quote(table)}`,
      [],
      `read ${table} for back-fill`
    )) as ReadonlyArray<{ account_id: string; environment: string; id: string; doc: string }>
    const update = `UPDATE ${quote(table)} SET ${columns.map((c) => `${quote(c)} = ?`).join(", ")} ` +
      "WHERE account_id = ? AND environment = ? AND id = ?"
    for (const row of rows) {
      const values = yield* Effect.try({
        try: () => {
          const doc = JSON.parse(row.doc)
          return columns.map((column) => spec.indexes[column]!.get(doc) ?? null)
        },
        catch: (cause) =>
          new StorageFailure({ detail: `${table}: back-fill of ${columns.join(", ")} failed on ${row.id}`, cause })
      })
      yield* run(update, [...values, row.account_id, row.environment, row.id], `back-fill ${table}`)
    }
  })
