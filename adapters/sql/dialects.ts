/** The query dialects of the databases the storage runs on. */
import type { Dialect } from "./dialect.js"

/** SQLite: `?` parameters, `IS NOT` for nulls-included difference, value lists spelled out (nulls sort first already). */
export const sqliteDialect: Dialect = {
  name: "sqlite",
  placeholder: () => "?",
  distinctFrom: "IS NOT",
  never: "0",
  inList: (column, values, _type, params) => {
    for (const v of values) params.push(v)
    return `${column} IN (${values.length === 1 ? "?" : values.map(() => "?").join(", ")})`
  },
  orderKey: (quoted) => quoted
}

/**
 * PostgreSQL: `$n` parameters, and a value list as one array parameter, so a query's text
 * stays the same whatever its values and is planned once per connection.
 */
export const postgresDialect: Dialect = {
  name: "postgres",
  placeholder: (index) => `$${index}`,
  distinctFrom: "IS DISTINCT FROM",
  never: "false",
  inList: (column, values, type, params) => {
    params.push(values)
    return `${column} = ANY($${params.length}::${type === "integer" ? "bigint[]" : "text[]"})`
  },
  orderKey: (quoted) => `${quoted} NULLS FIRST`
}
