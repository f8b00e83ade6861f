/**
 * The migration steps every SQL storage shares, written once over a dialect's DDL: create
 * a collection's table or add (and back-fill) the index columns it lacks, write added
 * fields into stored documents once, and keep the indexes the spec names. Every step is
 * idempotent and checks the live schema rather than the bookkeeping table (except added
 * fields, which cannot be seen without reading every document). Callers run them inside
 * one transaction that excludes other processes (`BEGIN IMMEDIATE`, an advisory lock).
 */
import { Effect, Either } from "effect"
import { replaceLoneSurrogates } from "../../src/domain/common.js"
import { StorageFailure } from "../../src/domain/errors.js"
import { indexColumnsToAdd, indexValuesOf, isSparseIndex, specProblem, storageIndexGroups } from "../../src/ports/specs.js"
import { type CollectionSpec, FieldOfRelated, ListOfField } from "../../src/ports/storage.js"
import type { Dialect, IndexType } from "./dialect.js"
import { quote, tableOf } from "./query.js"

/** Runs one statement on the connection of the open transaction. */
export type Run = (
  sql: string,
  params: ReadonlyArray<unknown>,
  what: string
) => Effect.Effect<ReadonlyArray<any>, StorageFailure>

/** A live column: its name and its type as the catalogue reports it. */
/** An index as the catalogue reports it. */
export interface LiveIndex {
  readonly name: string
  /** Whether it has a `WHERE` (leaves rows out). */
  readonly partial: boolean
}

export interface LiveColumn {
  readonly name: string
  readonly type: string
}

/** The DDL and catalogue reads of one database. */
export interface MigrationDialect extends Dialect {
  /** Longest collection name the dialect's identifiers leave room for. */
  readonly maxCollectionName?: number | undefined
  /** An index column's type as the catalogue reports it (to compare with a live column). */
  readonly reportedType: (type: IndexType) => string
  /** An index column's type in `CREATE TABLE` / `ADD COLUMN`. */
  readonly columnType: (type: IndexType) => string
  /** A collection's table: tenant, id, one column per index, the JSON document last. */
  readonly createTable: (spec: CollectionSpec<any>, table: string) => string
  /** The table's live columns; none when there is no such table. */
  readonly columnsOf: (run: Run, table: string) => Effect.Effect<ReadonlyArray<LiveColumn>, StorageFailure>
  /**
   * Brings a table of an earlier layout to the current one, keeping its documents; whether
   * it did (its index columns are then filled already).
   */
  readonly upgradeTable?: ((run: Run, spec: CollectionSpec<any>, table: string) => Effect.Effect<boolean, StorageFailure>) | undefined
  /** The name of the index on `group` (within the dialect's identifier length), `acrossTenants` or after the tenant. */
  readonly indexName: (table: string, group: ReadonlyArray<string>, acrossTenants: boolean) => string
  /** The `ix_…` indexes the table has, and whether each is partial (leaves rows out). */
  readonly indexesOf: (run: Run, table: string) => Effect.Effect<ReadonlyArray<LiveIndex>, StorageFailure>
  /** Records a migration step unless it is recorded: params (id, applied_at). */
  readonly recordMigration: string
  /** Writes `field` (its value as JSON text) into every document that lacks it. */
  readonly fillField: (quotedTable: string, field: string, json: string) => readonly [sql: string, params: ReadonlyArray<unknown>]
  /** Writes `field` as a one-element list of the document's own `source` into every document that lacks it. */
  readonly fillListField: (quotedTable: string, field: string, source: string) => readonly [sql: string, params: ReadonlyArray<unknown>]
  /**
   * Writes `field` into every document that lacks it, copied from the first matching row of
   * `related` (see `FieldOfRelated`), else `fallback`. Names come quoted.
   */
  readonly fillRelatedField: (
    quotedTable: string,
    field: string,
    related: RelatedRows,
    fallback: FillValue
  ) => readonly [sql: string, params: ReadonlyArray<unknown>]
  /** A stored document as the driver returns it, parsed. */
  readonly documentOf: (stored: unknown) => unknown
  /**
   * A condition true of every row whose stored `doc` text may escape a surrogate (`\ud800`),
   * and of few others: the rows `repairLoneSurrogates` reads.
   */
  readonly mayEscapeSurrogate: string
}

/** A value written into documents: JSON text, or a one-element list of the document's own field. */
export type FillValue = { readonly json: string } | { readonly listOf: string }

/** Where `fillRelatedField` looks: a table, its columns equal to ours (`[theirs, ours]`), its order. */
export interface RelatedRows {
  readonly table: string
  readonly match: ReadonlyArray<readonly [theirs: string, ours: string]>
  readonly orderBy: string
}

/** Records a step in `slotwise_migrations`, for operators (never read to decide, but for added fields). */
export const record = (dialect: MigrationDialect, run: Run, id: string) =>
  run(dialect.recordMigration, [id, Date.now()], `record migration ${id}`)

/** Creates the collection's table, or adds (and back-fills) the index columns it lacks; then its indexes. */
export const migrateCollection = (
  dialect: MigrationDialect,
  run: Run,
  spec: CollectionSpec<any>
): Effect.Effect<void, StorageFailure> =>
  Effect.gen(function*() {
    const problem = specProblem(
      spec,
      dialect.maxCollectionName === undefined ? {} : { maxNameLength: dialect.maxCollectionName }
    )
    if (problem !== undefined) return yield* Effect.fail(new StorageFailure({ detail: problem }))
    const table = tableOf(spec)
    const existing = yield* dialect.columnsOf(run, table)

    const created = existing.length === 0
    if (created) {
      yield* run(dialect.createTable(spec, table), [], `create ${table}`)
      yield* record(dialect, run, table)
    } else if (dialect.upgradeTable === undefined || !(yield* dialect.upgradeTable(run, spec, table))) {
      const types = new Map(existing.map((c) => [c.name, c.type]))
      const missing = yield* Either.mapLeft(
        indexColumnsToAdd(spec, table, types, dialect.reportedType),
        (detail) => new StorageFailure({ detail })
      )
      for (const column of missing) {
        yield* run(
          `ALTER TABLE ${quote(table)} ADD COLUMN ${quote(column)} ${dialect.columnType(spec.indexes[column]!.type)}`,
          [],
          `add ${table}.${column}`
        )
      }
      if (missing.length > 0) yield* backfill(dialect, run, spec, missing)
      for (const column of missing) yield* record(dialect, run, `${table}.${column}`)
    }

    yield* fillAddedFields(dialect, run, spec, created)
    yield* syncIndexes(dialect, run, spec)
  })

/**
 * Creates the indexes the spec names and drops the others (they only slow writes down); an
 * index whose sparseness the spec changed is made again.
 */
const syncIndexes = (dialect: MigrationDialect, run: Run, spec: CollectionSpec<any>) =>
  Effect.gen(function*() {
    const table = tableOf(spec)
    const keys = (group: ReadonlyArray<string>) => group.map((c) => dialect.orderKey(quote(c))).join(", ")
    // Name → its columns and the rows it leaves out (a sparse column's nulls).
    const wanted = new Map<string, { readonly columns: string; readonly where: string }>()
    for (const group of storageIndexGroups(spec)) {
      wanted.set(dialect.indexName(table, group, false), {
        columns: `account_id, environment, ${keys(group)}, id`,
        where: isSparseIndex(spec, group) ? ` WHERE ${quote(group[0]!)} IS NOT NULL` : ""
      })
    }
    // In the order of `listAcrossTenants`, so its scans stop at their limit.
    for (const group of spec.acrossTenantIndexes ?? []) {
      wanted.set(dialect.indexName(table, group, true), { columns: `${keys([...group, "id"])}, account_id, environment`, where: "" })
    }
    const present = new Map((yield* dialect.indexesOf(run, table)).map((index) => [index.name, index.partial]))
    for (const [name, partial] of present) {
      const index = wanted.get(name)
      if (index === undefined || (index.where !== "") !== partial) {
        yield* run(`DROP INDEX IF EXISTS ${quote(name)}`, [], `drop index ${name}`)
        present.delete(name)
      }
    }
    for (const [name, index] of wanted) {
      if (present.has(name)) continue
      yield* run(`CREATE INDEX IF NOT EXISTS ${quote(name)} ON ${quote(table)} (${index.columns})${index.where}`, [], `index ${name}`)
    }
  })

/**
 * Writes each of the spec's added fields into the documents stored without it. Unlike a
 * column, a field missing from some documents cannot be seen without reading them all, so
 * this step alone goes by the bookkeeping table: it runs once per field (a table created
 * with the field known holds no earlier documents).
 */
const fillAddedFields = (dialect: MigrationDialect, run: Run, spec: CollectionSpec<any>, created: boolean) =>
  Effect.gen(function*() {
    const table = tableOf(spec)
    for (const [field, value] of Object.entries(spec.addedFields ?? {})) {
      const step = `${table}.doc.${field}`
      if (!created) {
        const done = yield* run(
          `SELECT 1 FROM slotwise_migrations WHERE id = ${dialect.placeholder(1)}`,
          [step],
          `check ${step}`
        )
        if (done.length > 0) continue
        yield* repairLoneSurrogates(dialect, run, table)
        const [fill, params] = value instanceof FieldOfRelated
          ? yield* relatedFill(dialect, run, table, field, value)
          : plainFill(dialect, table, field, value)
        yield* run(fill, params, `fill ${step}`)
      }
      yield* record(dialect, run, step)
    }
  })

const fillValueOf = (value: unknown): FillValue => value instanceof ListOfField ? { listOf: value.field } : { json: JSON.stringify(value) }

const plainFill = (dialect: MigrationDialect, table: string, field: string, value: unknown) => {
  const fill = fillValueOf(value)
  return "listOf" in fill
    ? dialect.fillListField(quote(table), field, fill.listOf)
    : dialect.fillField(quote(table), field, fill.json)
}

/**
 * The fill of a field kept on related documents; the fallback alone while their table (or a
 * column the match needs) does not exist yet, since then there is nothing to copy from. The
 * related documents are read in SQL too, so they are repaired first like the table's own.
 */
const relatedFill = (dialect: MigrationDialect, run: Run, table: string, field: string, related: FieldOfRelated) =>
  Effect.flatMap(dialect.columnsOf(run, tableOf({ name: related.from })), (columns) => {
    const present = new Set(columns.map((c) => c.name))
    const needed = [...Object.keys(related.match), related.orderBy]
    if (!needed.every((column) => present.has(column))) return Effect.succeed(plainFill(dialect, table, field, related.fallback))
    return Effect.as(
      repairLoneSurrogates(dialect, run, tableOf({ name: related.from })),
      dialect.fillRelatedField(
        quote(table),
        field,
        {
          table: quote(tableOf({ name: related.from })),
          match: Object.entries(related.match).map(([theirs, ours]) => [quote(theirs), quote(ours)] as const),
          orderBy: quote(related.orderBy)
        },
        fillValueOf(related.fallback)
      )
    )
  })

/** `value` with each unpaired surrogate in its strings and keys replaced, or `value` itself when it holds none. */
const withoutLoneSurrogates = (value: unknown): unknown => {
  if (typeof value === "string") return replaceLoneSurrogates(value)
  if (value === null || typeof value !== "object") return value
  let changed = false
  const keep = <A>(before: unknown, after: A): A => {
    if (before !== after) changed = true
    return after
  }
  const repaired = Array.isArray(value)
    ? value.map((item) => keep(item, withoutLoneSurrogates(item)))
    : Object.fromEntries(
      Object.entries(value).map(([key, item]) => [keep(key, replaceLoneSurrogates(key)), keep(item, withoutLoneSurrogates(item))])
    )
  return changed ? repaired : value
}

/**
 * Gives U+FFFD in place of each unpaired surrogate to the table's documents that hold one:
 * earlier versions stored `"\ud800"` from a JSON body as it came. PostgreSQL keeps such a
 * `json` document but cannot parse it, so a fill that reads documents in SQL (`doc -> …`)
 * would fail on it, and with it every start. It runs before each fill, in the fill's
 * transaction, so a row an older instance still writes meanwhile is caught by the next fill.
 */
const repairLoneSurrogates = (dialect: MigrationDialect, run: Run, table: string) =>
  Effect.gen(function*() {
    const rows = (yield* run(
      `SELECT account_id, environment, id, doc FROM ${quote(table)} WHERE ${dialect.mayEscapeSurrogate}`,
      [],
      `find ${table} documents with unpaired surrogates`
    )) as ReadonlyArray<{ account_id: string; environment: string; id: string; doc: unknown }>
    const at = dialect.placeholder
    const update = `UPDATE ${quote(table)} SET doc = ${at(1)} WHERE account_id = ${at(2)} AND environment = ${at(3)} AND id = ${at(4)}`
    for (const row of rows) {
      const doc = dialect.documentOf(row.doc)
      const repaired = withoutLoneSurrogates(doc)
      if (repaired === doc) continue
      yield* run(update, [JSON.stringify(repaired), row.account_id, row.environment, row.id], `repair ${table}.${row.id}`)
    }
  })

/** Fills index columns from each row's document, with the spec's getters. */
export const backfill = (dialect: MigrationDialect, run: Run, spec: CollectionSpec<any>, columns: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const table = tableOf(spec)
    const rows = (yield* run(
      `SELECT account_id, environment, id, doc FROM ${quote(table)}`,
      [],
      `read ${table} for back-fill`
    )) as ReadonlyArray<{ account_id: string; environment: string; id: string; doc: unknown }>
    const n = columns.length
    const at = dialect.placeholder
    const update = `UPDATE ${quote(table)} SET ${columns.map((c, i) => `${quote(c)} = ${at(i + 1)}`).join(", ")} ` +
      `WHERE account_id = ${at(n + 1)} AND environment = ${at(n + 2)} AND id = ${at(n + 3)}`
    for (const row of rows) {
      const values = yield* Effect.try({
        try: () => indexValuesOf(spec, columns, dialect.documentOf(row.doc)),
        catch: (cause) => new StorageFailure({ detail: `${table}: back-fill of ${columns.join(", ")} failed on ${row.id}`, cause })
      })
      yield* run(update, [...values, row.account_id, row.environment, row.id], `back-fill ${table}`)
    }
  })
