/**
 * Query text for every SQL storage: tables and identifiers, a query's filters with the
 * reference adapter's null semantics, the keyset cursor, `ORDER BY` and `LIMIT`. Pure
 * string building over a `Dialect`; parameters are pushed onto an array in order.
 */
import { StorageFailure } from "../../src/domain/errors.js"
import type { CollectionSpec, Condition, IndexValue, ListQuery } from "../../src/ports/storage.js"
import type { TenantId } from "../../src/ports/tenant.js"
import { type Dialect, type IndexType, param } from "./dialect.js"

export const tableOf = (spec: { readonly name: string }): string => `c_${spec.name}`

/** Identifiers are validated by `specProblem`; quoting keeps keywords (`type`, `order`) legal. */
export const quote = (identifier: string): string => `"${identifier}"`

/** Comparison of a condition, with the reference adapter's null semantics. */
export const conditionSql = (dialect: Dialect, condition: Condition, type: IndexType, params: Array<unknown>): string => {
  const c = quote(condition.column)
  switch (condition.op) {
    case "eq":
      return condition.value === null ? `${c} IS NULL` : `${c} = ${param(dialect, params, condition.value)}`
    case "ne":
      // A null column differs from every non-null value.
      return `${c} ${dialect.distinctFrom} ${param(dialect, params, condition.value)}`
    case "in": {
      const values = condition.value.filter((v) => v !== null)
      const withNull = values.length < condition.value.length
      if (values.length === 0) return withNull ? `${c} IS NULL` : dialect.never
      const list = dialect.inList(c, values, type, params)
      return withNull ? `(${list} OR ${c} IS NULL)` : list
    }
    default: {
      // lt/lte/gt/gte never match a null on either side: SQL's comparison with NULL.
      const op = condition.op === "lt" ? "<" : condition.op === "lte" ? "<=" : condition.op === "gt" ? ">" : ">="
      return `${c} ${op} ${param(dialect, params, condition.value)}`
    }
  }
}

/**
 * Rows whose key (order columns, then id) is after `after`, nulls sorting first as in
 * `ORDER BY`. Without nulls in the cursor this is a row-value comparison (which an index
 * scan can start from); with one it is the spelled-out lexicographic form, since
 * `(NULL, …) > (NULL, …)` is NULL in SQL.
 */
export const afterSql = (
  dialect: Dialect,
  keys: ReadonlyArray<string>,
  after: ReadonlyArray<IndexValue>,
  params: Array<unknown>
): string => {
  const values = keys.map((_, i) => after[i] ?? null)
  if (values.every((v) => v !== null)) {
    const placeholders = values.map((v) => param(dialect, params, v))
    return `(${keys.map(quote).join(", ")}) > (${placeholders.join(", ")})`
  }
  const alternatives: Array<string> = []
  for (let i = 0; i < keys.length; i++) {
    const parts: Array<string> = []
    for (let j = 0; j < i; j++) {
      const v = values[j]
      parts.push(v === null ? `${quote(keys[j]!)} IS NULL` : `${quote(keys[j]!)} = ${param(dialect, params, v)}`)
    }
    const v = values[i]
    parts.push(v === null ? `${quote(keys[i]!)} IS NOT NULL` : `${quote(keys[i]!)} > ${param(dialect, params, v)}`)
    alternatives.push(`(${parts.join(" AND ")})`)
  }
  return `(${alternatives.join(" OR ")})`
}

/** `ORDER BY` the keys ascending, nulls first like the reference adapter. */
export const orderSql = (dialect: Dialect, keys: ReadonlyArray<string>): string =>
  `ORDER BY ${keys.map((k) => dialect.orderKey(quote(k))).join(", ")}`

/**
 * `LIMIT n` as a literal, or nothing (no limit, or an infinite one). A bound `LIMIT ?`
 * measured 12-18 µs slower per run on SQLite, most of a small lookup's cost; literals
 * make at most a handful of distinct texts.
 */
export const limitSql = (limit: number | undefined): string =>
  limit === undefined || !Number.isFinite(limit) ? "" : ` LIMIT ${Math.max(0, Math.trunc(limit))}`

/** What a collection's queries are checked and ordered against. */
export interface TableShape {
  /** The collection's name, for messages. */
  readonly name: string
  /** `id` and the index columns, with their types: the only columns a query may name. */
  readonly types: ReadonlyMap<string, IndexType>
  /** The keyset: order columns, then id. */
  readonly keys: ReadonlyArray<string>
}

/** The shape of a collection's table, from its spec. */
export const shapeOf = (spec: CollectionSpec<any>): TableShape => ({
  name: spec.name,
  types: new Map<string, IndexType>([["id", "text"], ...Object.entries(spec.indexes).map(([c, ix]) => [c, ix.type] as const)]),
  keys: [...spec.order, "id"]
})

/**
 * What both SQL stores derive once from a collection's spec: its quoted table, its index
 * columns with their getters, its shape, its order and the columns a row is read by.
 */
export const tableLayoutOf = <A extends { readonly id: string }>(dialect: Dialect, spec: CollectionSpec<A>) => {
  const columns = Object.keys(spec.indexes)
  const shape = shapeOf(spec)
  return {
    table: quote(tableOf(spec)),
    columns,
    getters: columns.map((column) => spec.indexes[column]!.get),
    shape,
    orderBy: orderSql(dialect, shape.keys),
    names: ["id", ...columns]
  } as const
}

/** The first column that is neither `id` nor an index column, as a typed fault. */
export const unknownColumn = (shape: TableShape, columns: Iterable<string>): StorageFailure | undefined => {
  for (const column of columns) {
    if (!shape.types.has(column)) return new StorageFailure({ detail: `${shape.name}: no index column ${column}` })
  }
  return undefined
}

/** Throws a typed fault unless every column is `id` or an index column. */
export const requireKnown = (shape: TableShape, columns: Iterable<string>): void => {
  const fault = unknownColumn(shape, columns)
  if (fault !== undefined) throw fault
}

/** `WHERE …` for a query (tenant, conditions, cursor), its parameters pushed onto `params`; unknown columns throw. */
export const whereSql = (
  dialect: Dialect,
  shape: TableShape,
  query: ListQuery,
  tenant: TenantId | undefined,
  params: Array<unknown>
): string => {
  const parts: Array<string> = []
  if (tenant !== undefined) {
    parts.push(
      `account_id = ${param(dialect, params, tenant.account_id)}`,
      `environment = ${param(dialect, params, tenant.environment)}`
    )
  }
  for (const condition of query.where ?? []) {
    const type = shape.types.get(condition.column)
    if (type === undefined) throw unknownColumn(shape, [condition.column])!
    parts.push(conditionSql(dialect, condition, type, params))
  }
  if (query.after !== undefined) parts.push(afterSql(dialect, shape.keys, query.after, params))
  return parts.length === 0 ? "" : `WHERE ${parts.join(" AND ")}`
}

/** Stands in for a parameter's value while a shape's text is built: reads it from a query of that shape. */
class Slot {
  constructor(readonly read: (query: ListQuery, tenant: TenantId | undefined) => unknown) {}
}

/** A parameter of a memoised text, from a query of its shape: a slot, a list of them (a value list), or a literal. */
const bound = (param: unknown, query: ListQuery, tenant: TenantId | undefined): unknown =>
  param instanceof Slot
    ? param.read(query, tenant)
    : Array.isArray(param)
    ? param.map((p) => bound(p, query, tenant))
    : param

const valueSlot = (value: IndexValue, read: (query: ListQuery) => IndexValue): IndexValue =>
  value === null ? null : (new Slot(read) as unknown as IndexValue)

/** `query` with a slot in place of each non-null value: the same shape, so the same text. */
const slotted = (query: ListQuery): ListQuery => ({
  where: (query.where ?? []).map((condition, i): Condition =>
    condition.op === "in"
      ? {
        ...condition,
        value: condition.value.map((v, j) => valueSlot(v, (q) => (q.where![i]!.value as ReadonlyArray<IndexValue>)[j]!))
      }
      : { ...condition, value: valueSlot(condition.value, (q) => q.where![i]!.value as IndexValue) }
  ),
  ...(query.after === undefined ? {} : { after: query.after.map((v, i) => valueSlot(v, (q) => q.after![i]!)) })
})

const tenantSlots = {
  account_id: new Slot((_, tenant) => tenant!.account_id),
  environment: new Slot((_, tenant) => tenant!.environment)
} as unknown as TenantId

/** A memoised statement: its text and its parameters (slots, to read from a query of its shape). */
interface Memo {
  readonly text: string
  readonly params: ReadonlyArray<unknown>
}

/** A step along a shape: the next part of what a query's text depends on. */
interface ShapeNode {
  readonly next: Map<string, ShapeNode>
  memo?: Memo
}

const shapeNode = (): ShapeNode => ({ next: new Map() })

/** A value's part of a shape: null or not (never an identifier, so never a column's part). */
const nullness = (value: IndexValue): string => (value === null ? "=n" : "=v")

/** The parts of short lists without nulls, by length: made once, so a lookup hashes no new string. */
const noNulls = Array.from({ length: 17 }, (_, n) => `=${"v".repeat(n)}`)

/** A list's part of a shape: `=` and, for each value, whether it is null. */
const listNullness = (values: ReadonlyArray<IndexValue>): string => {
  if (values.length < noNulls.length && !values.includes(null)) return noNulls[values.length]!
  let part = "="
  for (const v of values) part += v === null ? "n" : "v"
  return part
}

/**
 * The node of a query's shape: what its text depends on besides its values, one part at a
 * time (the tenant or none; each condition's column, operator and which of its values are
 * null; the cursor's nulls), so that a query of a known shape builds no key at all. Parts
 * other than columns and operators are never identifiers: no two shapes share a path.
 */
const shapeOfQuery = (
  step: (node: ShapeNode, part: string) => ShapeNode,
  from: ShapeNode,
  query: ListQuery,
  tenant: TenantId | undefined
): ShapeNode => {
  let node = step(from, tenant === undefined ? "#*" : "#t")
  for (const condition of query.where ?? []) {
    node = step(step(node, condition.column), condition.op)
    node = step(node, condition.op === "in" ? listNullness(condition.value) : nullness(condition.value))
  }
  return query.after === undefined ? node : step(node, `@${listNullness(query.after)}`)
}

/** Memoised texts start over past this many steps of shapes (lists of values make them open-ended). */
const STEP_LIMIT = 2000

/**
 * Statement texts memoised by the shape of their query: `statement(kind, columns, query,
 * tenant, params, text)` returns `text(whereSql(…))` and pushes the query's parameters,
 * building the text once per shape, `kind` and `columns` (what else the caller's text
 * depends on: its clauses, the columns it selects). The text is built by `whereSql` itself
 * over slots standing in for the values, so the order of the parameters is stated once,
 * there; a later query of the shape reads its values through those slots.
 * A repeated query then costs a walk of a few map lookups instead of a text, and the
 * statement cache finds the same text object again.
 */
export const statementMemo = (dialect: Dialect, shape: TableShape) => {
  let root = shapeNode()
  let steps = 0
  const step = (node: ShapeNode, part: string): ShapeNode => {
    let next = node.next.get(part)
    if (next === undefined) {
      node.next.set(part, next = shapeNode())
      steps++
    }
    return next
  }
  return (
    kind: string,
    columns: ReadonlyArray<string>,
    query: ListQuery,
    tenant: TenantId | undefined,
    params: Array<unknown>,
    text: (where: string) => string
  ): string => {
    if (steps > STEP_LIMIT) {
      root = shapeNode()
      steps = 0
    }
    let node = step(root, kind)
    for (const column of columns) node = step(node, column)
    node = shapeOfQuery(step, node, query, tenant)
    let memo = node.memo
    if (memo === undefined) {
      const slots: Array<unknown> = []
      memo = { text: text(whereSql(dialect, shape, slotted(query), tenant && tenantSlots, slots)), params: slots }
      node.memo = memo
    }
    for (const param of memo.params) params.push(bound(param, query, tenant))
    return memo.text
  }
}
