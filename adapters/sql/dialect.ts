/**
 * What differs between the SQL databases the storage runs on, as data: how a parameter is
 * named, how "differs, nulls included" and a value list are spelled, and how keys order with
 * nulls first (the DDL the migrations need is in migrations.ts). Everything else (keyset cursors, filters,
 * the migration steps) is written once against this, the way @effect/sql's Statement
 * compiler takes a dialect's options.
 *
 * adapters/sql/ is a library for the SQL adapters, not an adapter: it implements no port,
 * holds no connection and imports nothing but `effect` and the core, so sqlite/ and
 * postgres/ may import it without importing each other.
 */
import type { IndexSpec } from "../../src/ports/storage.js"

export type IndexType = IndexSpec<unknown>["type"]

export interface Dialect {
  readonly name: string
  /** The text naming the parameter just pushed, the `index`-th (1-based). */
  readonly placeholder: (index: number) => string
  /** `column <op> value` true when they differ, a null column differing from every value. */
  readonly distinctFrom: string
  /** Matches no row at all. */
  readonly never: string
  /** `column IN values` (no nulls among them); pushes its parameters. */
  readonly inList: (column: string, values: ReadonlyArray<unknown>, type: IndexType, params: Array<unknown>) => string
  /** A key in `ORDER BY` and in an index: ascending, nulls first (the reference adapter's order). */
  readonly orderKey: (quoted: string) => string
}

/** The parameter for `value`, pushed onto `params`, as the dialect names it. */
export const param = (dialect: Dialect, params: Array<unknown>, value: unknown): string => {
  params.push(value)
  return dialect.placeholder(params.length)
}
