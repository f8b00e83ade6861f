/**
 * What a table-per-collection adapter derives from a `CollectionSpec`, whatever its SQL:
 * whether the spec maps to a table at all, which index columns a live table lacks, which
 * column groups to index, and the index values of a document. Pure, so both database
 * adapters apply the same rules.
 */
import { Either } from "effect"
import type { CollectionSpec, IndexValue } from "./storage.js"

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/
/** The columns every collection table has besides its index columns. */
const RESERVED_COLUMNS = new Set(["account_id", "environment", "id", "doc"])

/**
 * Why a spec cannot be mapped to a table, if it cannot. `maxNameLength` bounds the
 * collection name where the database limits identifiers (table and index names derive from it).
 */
export const specProblem = (
  spec: CollectionSpec<any>,
  options: { readonly maxNameLength?: number } = {}
): string | undefined => {
  const { maxNameLength } = options
  if (!IDENTIFIER.test(spec.name) || (maxNameLength !== undefined && spec.name.length > maxNameLength)) {
    const bound = maxNameLength === undefined ? "" : ` of at most ${maxNameLength} characters`
    return `collection name ${JSON.stringify(spec.name)} is not an identifier${bound}`
  }
  for (const column of Object.keys(spec.indexes)) {
    if (!IDENTIFIER.test(column)) return `${spec.name}: index ${JSON.stringify(column)} is not an identifier`
    if (RESERVED_COLUMNS.has(column)) return `${spec.name}: index ${JSON.stringify(column)} is a reserved column`
  }
  for (const column of spec.order) {
    if (!(column in spec.indexes)) return `${spec.name}: order column ${JSON.stringify(column)} is not an index`
  }
  for (const field of Object.keys(spec.addedFields ?? {})) {
    if (!IDENTIFIER.test(field)) return `${spec.name}: added field ${JSON.stringify(field)} is not an identifier`
  }
  for (const group of spec.storageIndexes ?? []) {
    const unknown = group.find((column) => !(column in spec.indexes))
    if (group.length === 0 || unknown !== undefined) {
      return `${spec.name}: storage index ${JSON.stringify(group)} names no declared index column`
    }
  }
  for (const group of spec.acrossTenantIndexes ?? []) {
    const unknown = group.find((column) => !(column in spec.indexes))
    if (group.length === 0 || unknown !== undefined) {
      return `${spec.name}: index across tenants ${JSON.stringify(group)} names no declared index column`
    }
  }
  for (const column of spec.sparseColumns ?? []) {
    if (!(column in spec.indexes)) return `${spec.name}: sparse column ${JSON.stringify(column)} is not an index`
  }
  return undefined
}

/** Whether the storage index on `group` leaves out the rows whose first column is null (see `sparseColumns`). */
export const isSparseIndex = (spec: CollectionSpec<any>, group: ReadonlyArray<string>): boolean =>
  spec.sparseColumns?.includes(group[0]!) === true

/**
 * The spec's index columns that `table` lacks, given its live column types and the type the
 * adapter gives each declared type; a Left with the reason when a present column has
 * another type (changing it would lose data, so that is left to an operator).
 */
export const indexColumnsToAdd = (
  spec: CollectionSpec<any>,
  table: string,
  liveTypes: ReadonlyMap<string, string>,
  columnType: (type: "text" | "integer") => string
): Either.Either<ReadonlyArray<string>, string> => {
  const missing: Array<string> = []
  for (const [column, ix] of Object.entries(spec.indexes)) {
    const type = liveTypes.get(column)
    if (type === undefined) missing.push(column)
    else if (type !== columnType(ix.type)) {
      return Either.left(`${table}.${column} is ${type} but the spec declares ${ix.type}; migrate it by hand`)
    }
  }
  return Either.right(missing)
}

/**
 * The column groups to index (each then followed by `id`): the spec's storage indexes (one
 * per column by default), plus one on the order columns unless a group is exactly those.
 */
export const storageIndexGroups = (spec: CollectionSpec<any>): ReadonlyArray<ReadonlyArray<string>> => {
  const groups = spec.storageIndexes ?? Object.keys(spec.indexes).map((column) => [column])
  const orderIndexed = spec.order.length === 0 || groups.some((group) => group.join() === spec.order.join())
  return orderIndexed ? groups : [...groups, spec.order]
}

/** `columns`' index values for `doc`, in order: what a back-fill writes into new columns. */
export const indexValuesOf = (
  spec: CollectionSpec<any>,
  columns: ReadonlyArray<string>,
  doc: unknown
): Array<IndexValue> => columns.map((column) => spec.indexes[column]!.get(doc) ?? null)
