/**
 * The in-memory storage's indexes: a tenant's rows of one collection kept in order of one
 * index column (then id), so a query's conditions on that column select a run of rows by
 * binary search instead of every row being tested. What they select is only narrowed:
 * every row selected is still tested against all the query's conditions.
 */
import type { CollectionSpec, Condition, IndexValue } from "../../src/ports/storage.js"
import type { TenantId } from "../../src/ports/tenant.js"

export interface Row {
  readonly tenant: TenantId
  readonly doc: { readonly id: string }
  readonly index: Readonly<Record<string, IndexValue>>
}

/** Below this many rows a table is scanned: building and keeping an order would cost more. */
export const ORDER_FROM_ROWS = 32

export const compareValues = (a: IndexValue, b: IndexValue): number => a === b ? 0 : a === null ? -1 : b === null ? 1 : a < b ? -1 : 1

export const valueOf = (row: Row, column: string): IndexValue => column === "id" ? row.doc.id : (row.index[column] ?? null)

/** The first position in `rows` at which `reached` holds (it holds from there to the end). */
export const firstWhere = <A>(rows: ReadonlyArray<A>, reached: (row: A) => boolean): number => {
  let lo = 0
  let hi = rows.length
  while (lo < hi) {
    const mid = (lo + hi) >>> 1
    if (reached(rows[mid]!)) hi = mid
    else lo = mid + 1
  }
  return lo
}

/** Where `row` is, or goes, in `rows` ordered by `column` then id. */
const positionOf = (rows: ReadonlyArray<Row>, column: string, row: Row): number => {
  const value = valueOf(row, column)
  const id = row.doc.id
  return firstWhere(rows, (at) => (compareValues(valueOf(at, column), value) || compareValues(at.doc.id, id)) >= 0)
}

/** `rows` in order of `column`, then id. */
const orderBy = (rows: Iterable<Row>, column: string): Array<Row> =>
  Array.from(rows).sort((a, b) => compareValues(valueOf(a, column), valueOf(b, column)) || compareValues(a.doc.id, b.doc.id))

/** Keeps `ordered` (by `column`) in step with one row replaced, added or removed. */
const reorder = (ordered: Array<Row>, column: string, before: Row | undefined, after: Row | undefined): void => {
  if (before !== undefined) {
    const at = positionOf(ordered, column, before)
    if (ordered[at] === before) {
      // An update that keeps this column's value keeps its place.
      if (after !== undefined && valueOf(after, column) === valueOf(before, column)) {
        ordered[at] = after
        return
      }
      ordered.splice(at, 1)
    }
  }
  if (after !== undefined) ordered.splice(positionOf(ordered, column, after), 0, after)
}

/** Half-open runs of positions in an ordered array. */
type Runs = ReadonlyArray<readonly [number, number]>

const sizeOf = (runs: Runs): number => runs.reduce((n, [lo, hi]) => n + Math.max(0, hi - lo), 0)

/** A condition's value can be placed among the column's values (its declared type, or null). */
const comparable = (type: "text" | "integer", value: IndexValue): boolean =>
  value === null || typeof value === (type === "text" ? "string" : "number")

/**
 * The runs of `ordered` (by `column`) that can satisfy `conditions` on that column, or
 * undefined where they do not narrow it (no condition on it, `ne`, or a value of another type).
 * Comparisons never match null, as in SQL and in the storage's own test of a row.
 */
const runsFor = (
  ordered: ReadonlyArray<Row>,
  column: string,
  type: "text" | "integer",
  conditions: ReadonlyArray<Condition>
): Runs | undefined => {
  let lo = 0
  let hi = ordered.length
  let values: ReadonlyArray<IndexValue> | undefined
  let narrowed = false
  const atOrAbove = (value: IndexValue) => firstWhere(ordered, (row) => compareValues(valueOf(row, column), value) >= 0)
  const above = (value: IndexValue) => firstWhere(ordered, (row) => compareValues(valueOf(row, column), value) > 0)
  const notNull = () => firstWhere(ordered, (row) => valueOf(row, column) !== null)
  for (const c of conditions) {
    if (c.column !== column || c.op === "ne") continue
    if (c.op === "in") {
      if (!c.value.every((value) => comparable(type, value))) continue
      values = values === undefined ? c.value : values.filter((value) => c.value.includes(value))
      narrowed = true
      continue
    }
    if (!comparable(type, c.value)) continue
    narrowed = true
    if (c.value === null && c.op !== "eq") return []
    switch (c.op) {
      case "eq":
        lo = Math.max(lo, atOrAbove(c.value))
        hi = Math.min(hi, above(c.value))
        break
      case "gt":
        lo = Math.max(lo, above(c.value))
        break
      case "gte":
        lo = Math.max(lo, atOrAbove(c.value))
        break
      case "lt":
        lo = Math.max(lo, notNull())
        hi = Math.min(hi, atOrAbove(c.value))
        break
      case "lte":
        lo = Math.max(lo, notNull())
        hi = Math.min(hi, above(c.value))
        break
    }
  }
  if (!narrowed) return undefined
  if (values === undefined) return [[lo, hi]]
  return [...new Set(values)].map((value) => [Math.max(lo, atOrAbove(value)), Math.min(hi, above(value))] as const)
}

/** A tenant's rows of one collection, with the orders its queries have asked for. */
export interface Table {
  readonly rows: Map<string, Row>
  /** Per index column, every row in order of it: made by the first query it narrows, then kept. */
  readonly ordered: Map<string, Array<Row>>
}

export const emptyTable = (): Table => ({ rows: new Map(), ordered: new Map() })

/** Writes one row (or removes it, `undefined`) to `table` and to each of its orders. */
export const putRow = (table: Table, id: string, row: Row | undefined): void => {
  const before = table.rows.get(id)
  for (const [column, ordered] of table.ordered) reorder(ordered, column, before, row)
  if (row === undefined) table.rows.delete(id)
  else table.rows.set(id, row)
}

/** The rows of `table` in order of `column` (then id), made on first use and kept from then on. */
const orderedBy = (table: Table, column: string): Array<Row> => {
  let ordered = table.ordered.get(column)
  if (ordered === undefined) table.ordered.set(column, ordered = orderBy(table.rows.values(), column))
  return ordered
}

/** The narrowest run of rows any one column's conditions select, with its size. */
const narrowest = (spec: CollectionSpec<any>, table: Table, conditions: ReadonlyArray<Condition>) => {
  let best: { readonly ordered: ReadonlyArray<Row>; readonly runs: Runs; readonly size: number } | undefined
  const tried = new Set<string>()
  for (const c of conditions) {
    if (best?.size === 0) break
    if (c.column === "id") {
      const ids = c.op === "eq" ? [c.value] : c.op === "in" ? c.value : undefined
      if (ids === undefined) continue
      const rows = [...new Set(ids)].flatMap((id) => {
        const row = typeof id === "string" ? table.rows.get(id) : undefined
        return row === undefined ? [] : [row]
      })
      if (best === undefined || rows.length < best.size) best = { ordered: rows, runs: [[0, rows.length]], size: rows.length }
      continue
    }
    const index = spec.indexes[c.column]
    if (index === undefined || tried.has(c.column)) continue
    tried.add(c.column)
    const ordered = orderedBy(table, c.column)
    const runs = runsFor(ordered, c.column, index.type, conditions)
    if (runs === undefined) continue
    const size = sizeOf(runs)
    if (best === undefined || size < best.size) best = { ordered, runs, size }
  }
  return best
}

function* rowsIn(ordered: ReadonlyArray<Row>, runs: Runs) {
  for (const [lo, hi] of runs) for (let i = lo; i < hi; i++) yield ordered[i]!
}

/** A page of a list: at most `limit` rows after the keyset `after`, each passing `accept`. */
export interface PageCut {
  readonly after: ReadonlyArray<IndexValue> | undefined
  readonly limit: number
  /** Tests a row against the query's conditions (and may skip it). */
  readonly accept: (row: Row) => boolean
}

/** A page walks its order only where the conditions leave more rows than this many pages. */
const WALK_FROM_PAGES = 8

/**
 * `page` walked along the list's own order from its cursor, for a collection ordered by one
 * column (or by id alone); undefined for a list ordered otherwise, or a cursor whose values
 * cannot be placed in that order.
 */
const walk = (spec: CollectionSpec<any>, table: Table, { accept, after, limit }: PageCut): Array<Row> | undefined => {
  if (spec.order.length > 1) return undefined
  const column = spec.order[0] ?? "id"
  const [value, id] = spec.order.length === 0 ? [after?.[0] ?? null, after?.[0] ?? null] : [after?.[0] ?? null, after?.[1] ?? null]
  if (!comparable(column === "id" ? "text" : spec.indexes[column]!.type, value) || !comparable("text", id)) return undefined
  const ordered = orderedBy(table, column)
  let at = after === undefined
    ? 0
    : firstWhere(ordered, (row) => (compareValues(valueOf(row, column), value) || compareValues(row.doc.id, id)) > 0)
  const rows: Array<Row> = []
  for (; at < ordered.length && rows.length < limit; at++) if (accept(ordered[at]!)) rows.push(ordered[at]!)
  return rows
}

/**
 * The rows of `table` that may satisfy `conditions`: those of the narrowest run any one
 * column's conditions select (an order is made for a column the first time it is asked),
 * or every row when none narrows. For a `page` whose conditions leave more than a few pages
 * of rows, the page walked along the list's order instead. Rows need testing against the
 * conditions still.
 */
export const candidates = (
  spec: CollectionSpec<any>,
  table: Table,
  conditions: ReadonlyArray<Condition>,
  page?: PageCut
): Iterable<Row> => {
  if (table.rows.size < ORDER_FROM_ROWS) return table.rows.values()
  const best = conditions.length === 0 ? undefined : narrowest(spec, table, conditions)
  if (page !== undefined && (best === undefined || best.size > page.limit * WALK_FROM_PAGES)) {
    const walked = walk(spec, table, page)
    if (walked !== undefined) return walked
  }
  return best === undefined || best.size >= table.rows.size ? table.rows.values() : rowsIn(best.ordered, best.runs)
}
