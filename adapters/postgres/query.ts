/**
 * SQL text for the PostgreSQL adapter: identifiers, conditions, keyset cursors, limits.
 * Parameters are pushed onto an array and named `$n` by position. Texts stay the same for
 * a query shape whatever its values (an `in` list is one array parameter), so each shape
 * is parsed and planned once per connection as a named prepared statement.
 */
import type { CollectionSpec, Condition, IndexValue } from "../../src/ports/storage.js"

export const tableOf = (spec: CollectionSpec<any>): string => `c_${spec.name}`

/** Identifiers are validated by `specProblem`; quoting keeps keywords (`type`, `order`) legal. */
export const quote = (identifier: string): string => `"${identifier}"`

/** The parameter for `value`, pushed onto `params`: `$n`. */
export const param = (params: Array<unknown>, value: unknown): string => {
  params.push(value)
  return `$${params.length}`
}

/** The SQL array type a column's `in` list binds as. */
const arrayType = (type: "text" | "integer"): string => (type === "integer" ? "bigint[]" : "text[]")

/** Comparison of a condition, with the reference adapter's null semantics. */
export const conditionSql = (
  condition: Condition,
  type: "text" | "integer",
  params: Array<unknown>
): string => {
  const c = quote(condition.column)
  switch (condition.op) {
    case "eq":
      return condition.value === null ? `${c} IS NULL` : `${c} = ${param(params, condition.value)}`
    case "ne":
      // A null column differs from every non-null value.
      return `${c} IS DISTINCT FROM ${param(params, condition.value)}`
    case "in": {
      const values = condition.value.filter((v) => v !== null)
      const withNull = values.length < condition.value.length
      if (values.length === 0) return withNull ? `${c} IS NULL` : "false"
      const list = `${c} = ANY(${param(params, values)}::${arrayType(type)})`
      return withNull ? `(${list} OR ${c} IS NULL)` : list
    }
    default: {
      // lt/lte/gt/gte never match a null on either side: SQL's comparison with NULL.
      const op = condition.op === "lt" ? "<" : condition.op === "lte" ? "<=" : condition.op === "gt" ? ">" : ">="
      return `${c} ${op} ${param(params, condition.value)}`
    }
  }
}

/**
 * Rows whose key (order columns, then id) is after `after`, nulls sorting first as in
 * `ORDER BY … NULLS FIRST`. Without nulls in the cursor this is a row-value comparison
 * (which an index scan can start from); with one it is the spelled-out lexicographic
 * form, since `(NULL, …) > (NULL, …)` is NULL in SQL.
 */
export const afterSql = (
  keys: ReadonlyArray<string>,
  after: ReadonlyArray<IndexValue>,
  params: Array<unknown>
): string => {
  const values = keys.map((_, i) => after[i] ?? null)
  if (values.every((v) => v !== null)) {
    const placeholders = values.map((v) => param(params, v))
    return `(${keys.map(quote).join(", ")}) > (${placeholders.join(", ")})`
  }
  const alternatives: Array<string> = []
  for (let i = 0; i < keys.length; i++) {
    const parts: Array<string> = []
    for (let j = 0; j < i; j++) {
      const v = values[j]
      parts.push(v === null ? `${quote(keys[j]!)} IS NULL` : `${quote(keys[j]!)} = ${param(params, v)}`)
    }
    const v = values[i]
    parts.push(v === null ? `${quote(keys[i]!)} IS NOT NULL` : `${quote(keys[i]!)} > ${param(params, v)}`)
    alternatives.push(`(${parts.join(" AND ")})`)
  }
  return `(${alternatives.join(" OR ")})`
}

/** `ORDER BY` the keys ascending, nulls first like the reference adapter. */
export const orderSql = (keys: ReadonlyArray<string>): string =>
  `ORDER BY ${keys.map((k) => `${quote(k)} NULLS FIRST`).join(", ")}`

/** `LIMIT n` as a literal (at most a handful of distinct texts), or nothing. */
export const limitSql = (limit: number | undefined): string =>
  limit === undefined || !Number.isFinite(limit) ? "" : ` LIMIT ${Math.max(0, Math.trunc(limit))}`
