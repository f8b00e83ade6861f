/**
 * SQL for the SQLite storage: running a statement (prepared once per connection) and JSON
 * documents back from rows as typed faults (query texts are adapters/sql/query.ts). Everything here is synchronous and throws
 * `StorageFailure`; callers run it in one step.
 */
import type Database from "better-sqlite3"
import { StorageFailure } from "../../src/domain/errors.js"
import { deepFreeze } from "../../src/ports/frozen.js"

export { limitSql, requireKnown, shapeOf, type TableShape } from "../sql/query.js"

export type Connection = Database.Database
type Statement = Database.Statement
/** A connection's prepared statement for a text (`raw`: rows as arrays of values). */
export type Statements = (text: string, raw: boolean) => Statement

export const codeOf = (cause: unknown): string | undefined => {
  const code = (cause as { readonly code?: unknown } | undefined)?.code
  return typeof code === "string" ? code : undefined
}

export const messageOf = (cause: unknown): string => cause instanceof Error ? cause.message : String(cause)

export const failure = (what: string, cause: unknown): StorageFailure =>
  cause instanceof StorageFailure ? cause : new StorageFailure({ detail: `${what}: ${messageOf(cause)}`, cause })

/**
 * Prepared statements of one connection by text. Lists of `IN (?, ?, …)` make the texts
 * open-ended, so the cache starts over when it grows past what any real workload repeats.
 * Raw statements (rows as arrays) have a map of their own, so a text is looked up as it is.
 */
export const statementCache = (db: Connection): Statements => {
  const byText = new Map<string, Statement>()
  const rawByText = new Map<string, Statement>()
  return (text: string, raw: boolean): Statement => {
    const cache = raw ? rawByText : byText
    let statement = cache.get(text)
    if (statement === undefined) {
      if (byText.size + rawByText.size >= 500) {
        byText.clear()
        rawByText.clear()
      }
      statement = db.prepare(text)
      if (raw && statement.reader) statement.raw(true)
      cache.set(text, statement)
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

/** `parse()`, with JSON that does not parse (a corrupt row) as a typed fault. */
export const parsed = <A>(what: string, parse: () => A): A => {
  try {
    return parse()
  } catch (cause) {
    throw new StorageFailure({ detail: `${what}: corrupt JSON`, cause })
  }
}

/**
 * Documents by their stored text. A document read again (the service, staff member, hours
 * and client of every create; a page polled) is the same text, so it is parsed once: parsing
 * cost a create ~2–6 % of its CPU. The values are shared by every reader, as the memory
 * storage shares its documents, so they are frozen (src/ports/frozen.ts). Bounded by
 * count (it starts over when full) and by size (longer texts are parsed each time).
 */
const documents = new Map<string, unknown>()
const DOCUMENTS_KEPT = 1000
const LONGEST_KEPT = 4096

const documentOf = (text: string): unknown => {
  let doc = documents.get(text)
  if (doc === undefined) {
    doc = JSON.parse(text)
    if (text.length <= LONGEST_KEPT) {
      if (documents.size >= DOCUMENTS_KEPT) documents.clear()
      documents.set(text, deepFreeze(doc))
    }
  }
  return doc
}

/** JSON documents back from their rows (read-only; see `documentOf`). */
export const parseAll = <A>(what: string, rows: ReadonlyArray<{ readonly doc: string }>): Array<A> =>
  parsed(what, () => rows.map((row) => documentOf(row.doc) as A))
