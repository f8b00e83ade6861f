/**
 * SQL text for the PostgreSQL adapter: the shared query text (adapters/sql/query.ts) in
 * PostgreSQL's dialect. Parameters are named `$n` by position, and an `in` list is one array
 * parameter, so a query shape's text is the same whatever its values and each shape is
 * parsed and planned once per connection as a named prepared statement.
 */
export { postgresDialect as dialect } from "../sql/dialects.js"
export { limitSql, orderSql, quote, shapeOf, tableLayoutOf, tableOf, unknownColumn, whereSql } from "../sql/query.js"
