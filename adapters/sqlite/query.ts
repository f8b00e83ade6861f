/**
 * SQL for the SQLite storage: running a statement (prepared once per connection), the
 * `WHERE` of a query (conditions with the reference adapter's null semantics, the keyset
 * `after`, checked columns), `LIMIT`, and JSON documents back from rows as typed faults.
 * Everything here is synchronous and throws `StorageFailure`; callers run it in one step.
 */
import type Database from "better-sqlite3"
import { StorageFailure } from "../../src/domain/errors.js"
import type { Condition, IndexValue, ListQuery } from "../../src/ports/storage.js"
import type { TenantId } from "../../src/ports/tenant.js"
import { quote } from "./migrations.js"

export type Connection = Database.Database
type Statement = Database.Statement
/** A connection's prepared statement for a text (`raw`: rows as arrays of values). */
export type Statements = (text: string, raw: boolean) => Statement

export const codeOf = (cause: unknown): string | undefined => {
  const code = (cause as { readonly code?: unknown } | undefined)?.code
  return typeof code === "string" ? code : undefined
}

export const messageOf = (cause: unknown): string =>
  cause instanceof Error ? cause.message : String(cause)

export const failure = (what: string, cause: unknown): StorageFailure =>
  cause instanceof StorageFailure ? cause : new StorageFailure({ detail: `${what}: ${messageOf(cause)}`, cause })

/**
 * Prepared statements of one connection by text. Lists of `IN (?, ?, …)` make the texts
 * open-ended, so the cache starts over when it grows past what any real workload repeats.
 */
export const statementCache = (db: Connection): Statements => {
  const cache = new Map<string, Statement>()
  return (text: string, raw: boolean): Statement => {
    const key = raw ? `r ${text}` : text
    let statement = cache.get(key)
    if (statement === undefined) {
      if (cache.size >= 500) cache.clear()
      statement = db.prepare(text)
      if (raw && statement.reader) statement.raw(true)
      cache.set(key, statement)
    }
    return statement
  }
}

/** Runs one statement: rows for a reader, nothing for a writer. Throws StorageFailure. */
export const execute = (
  statements: Statements,
  text: string,
  params: ReadonlyArray<unknown>,
  what: string,
  raw = false
): Array<any> => {
  try {
    const statement = statements(text, raw)
    if (statement.reader) return statement.all(...params)
    statement.run(...params)
    return []
  } catch (cause) {
    throw failure(what, cause)
  }
}

/** Comparison of a condition, with the reference adapter's null semantics. */
const conditionSql = (column: string, condition: Condition, params: Array<unknown>): string => {
  const c = quote(column)
  switch (condition.op) {
    case "eq":
      if (condition.value === null) return `${c} IS NULL`
      params.push(condition.value)
      return `${c} = ?`
    case "ne":
      // A null column differs from every non-null value.
      params.push(condition.value)
      return `${c} IS NOT ?`
    case "in": {
      const values = condition.value.filter((v) => v !== null)
      const withNull = values.length < condition.value.length
      if (values.length === 0) return withNull ? `${c} IS NULL` : "0"
      for (const v of values) params.push(v)
      const list = `${c} IN (${values.length === 1 ? "?" : values.map(() => "?").join(", ")})`
      return withNull ? `(${list} OR ${c} IS NULL)` : list
    }
    default: {
      // lt/lte/gt/gte never match a null on either side: SQL's comparison with NULL.
      params.push(condition.value)
      const op = condition.op === "lt" ? "<" : condition.op === "lte" ? "<=" : condition.op === "gt" ? ">" : ">="
      return `${c} ${op} ?`
    }
  }
}

/**
 * Rows whose key (order columns, then id) is after `after`, nulls sorting first as in
 * `ORDER BY`. Without nulls in the cursor this is a row-value comparison; with one it is the
 * spelled-out lexicographic form, since `(NULL, …) > (NULL, …)` is NULL in SQL.
 */
const afterSql = (keys: ReadonlyArray<string>, after: ReadonlyArray<IndexValue>, params: Array<unknown>): string => {
  const values = keys.map((_, i) => after[i] ?? null)
  if (values.every((v) => v !== null)) {
    params.push(...values)
    return `(${keys.map(quote).join(", ")}) > (${keys.map(() => "?").join(", ")})`
  }
  const alternatives: Array<string> = []
  for (let i = 0; i < keys.length; i++) {
    const parts: Array<string> = []
    for (let j = 0; j < i; j++) {
      const v = values[j]
      if (v === null) parts.push(`${quote(keys[j]!)} IS NULL`)
      else {
        parts.push(`${quote(keys[j]!)} = ?`)
        params.push(v)
      }
    }
    const v = values[i]
    if (v === null) parts.push(`${quote(keys[i]!)} IS NOT NULL`)
    else {
      parts.push(`${quote(keys[i]!)} > ?`)
      params.push(v)
    }
    alternatives.push(`(${parts.join(" AND ")})`)
  }
  return `(${alternatives.join(" OR ")})`
}

/** What a collection's queries are checked and ordered against. */
export interface TableShape {
  /** The collection's name, for messages. */
  readonly name: string
  /** `id` and the index columns: the only columns a query may name. */
  readonly known: ReadonlySet<string>
  /** The keyset: order columns, then id. */
  readonly keys: ReadonlyArray<string>
}

/** Fails with a typed fault unless every column is `id` or an index column. */
export const requireKnown = (shape: TableShape, columns: Iterable<string>): void => {
  for (const column of columns) {
    if (!shape.known.has(column)) throw new StorageFailure({ detail: `${shape.name}: no index column ${column}` })
  }
}

/** `WHERE …` for a query, its parameters pushed onto `params`; unknown columns fail. */
export const whereSql = (
  shape: TableShape,
  query: ListQuery,
  tenant: TenantId | undefined,
  params: Array<unknown>
): string => {
  const parts: Array<string> = []
  if (tenant !== undefined) {
    parts.push("account_id = ?", "environment = ?")
    params.push(tenant.account_id, tenant.environment)
  }
  for (const condition of query.where ?? []) {
    requireKnown(shape, [condition.column])
    parts.push(conditionSql(condition.column, condition, params))
  }
  if (query.after !== undefined) parts.push(afterSql(shape.keys, query.after, params))
  return parts.length === 0 ? "" : `WHERE ${parts.join(" AND ")}`
}

/**
 * `LIMIT n` as a literal, or nothing. A bound `LIMIT ?` measured 12-18 µs slower per run
 * (better-sqlite3 12, SQLite 3.50), which is most of a small lookup's cost.
 */
export const limitSql = (limit: number | undefined): string =>
  limit === undefined ? "" : ` LIMIT ${Number.isFinite(limit) ? Math.max(0, Math.trunc(limit)) : -1}`

/** `parse()`, with JSON that does not parse (a corrupt row) as a typed fault. */
export const parsed = <A>(what: string, parse: () => A): A => {
  try {
    return parse()
  } catch (cause) {
    throw new StorageFailure({ detail: `${what}: corrupt JSON`, cause })
  }
}

/** JSON documents back from their rows. */
export const parseAll = <A>(what: string, rows: ReadonlyArray<{ readonly doc: string }>): Array<A> =>
  parsed(what, () => rows.map((row) => JSON.parse(row.doc) as A))
