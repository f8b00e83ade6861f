/**
 * The shared query text in each dialect. The storage contract suite proves what the queries
 * return on SQLite and PostgreSQL; this pins what differs between them, so a change to the
 * shared builder shows both texts at once.
 */
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { postgresDialect, sqliteDialect } from "../../adapters/sql/dialects.js"
import { limitSql, orderSql, shapeOf, statementMemo, whereSql } from "../../adapters/sql/query.js"
import type { CollectionSpec, Condition, ListQuery } from "../../src/ports/storage.js"

const spec = {
  name: "things",
  indexes: { staff_id: { type: "text", get: () => null }, start_ms: { type: "integer", get: () => null } },
  order: ["start_ms"]
} as unknown as CollectionSpec<{ readonly id: string }>
const tenant = { account_id: "acc_1", environment: "sandbox" } as const
const query = {
  where: [
    { column: "staff_id", op: "in", value: ["stf_1", null] },
    { column: "staff_id", op: "ne", value: "stf_2" },
    { column: "start_ms", op: "gte", value: 5 }
  ],
  after: [null, "thg_1"]
} as const

describe("a query in each dialect", () => {
  it("SQLite: `?` parameters, a spelled-out value list, IS NOT", () => {
    const params: Array<unknown> = []
    expect(whereSql(sqliteDialect, shapeOf(spec), query as never, tenant, params)).toBe(
      "WHERE account_id = ? AND environment = ? AND (\"staff_id\" IN (?) OR \"staff_id\" IS NULL) " +
        "AND \"staff_id\" IS NOT ? AND \"start_ms\" >= ? AND ((\"start_ms\" IS NOT NULL) OR (\"start_ms\" IS NULL AND \"id\" > ?))"
    )
    expect(params).toEqual(["acc_1", "sandbox", "stf_1", "stf_2", 5, "thg_1"])
    expect(orderSql(sqliteDialect, shapeOf(spec).keys)).toBe("ORDER BY \"start_ms\", \"id\"")
  })

  it("PostgreSQL: `$n` parameters, one typed array for a value list, IS DISTINCT FROM, nulls first", () => {
    const params: Array<unknown> = []
    expect(whereSql(postgresDialect, shapeOf(spec), query as never, tenant, params)).toBe(
      "WHERE account_id = $1 AND environment = $2 AND (\"staff_id\" = ANY($3::text[]) OR \"staff_id\" IS NULL) " +
        "AND \"staff_id\" IS DISTINCT FROM $4 AND \"start_ms\" >= $5 AND ((\"start_ms\" IS NOT NULL) OR (\"start_ms\" IS NULL AND \"id\" > $6))"
    )
    expect(params).toEqual(["acc_1", "sandbox", ["stf_1"], "stf_2", 5, "thg_1"])
    expect(orderSql(postgresDialect, shapeOf(spec).keys)).toBe("ORDER BY \"start_ms\" NULLS FIRST, \"id\" NULLS FIRST")
  })

  it("an unknown column is a typed storage fault, not a query the database rejects", () => {
    expect(() => whereSql(sqliteDialect, shapeOf(spec), { where: [{ column: "email", op: "eq", value: "x" }] }, tenant, []))
      .toThrow(/things: no index column email/)
  })

  it("a limit is a literal; none, or an infinite one, is no clause", () => {
    expect([limitSql(20), limitSql(2.7), limitSql(-1), limitSql(undefined), limitSql(Infinity)]).toEqual([
      " LIMIT 20",
      " LIMIT 2",
      " LIMIT 0",
      "",
      ""
    ])
  })

  it("a memoised statement has whereSql's text and parameters, for every shape and values of each shape", () => {
    const value = fc.oneof(fc.constant(null), fc.string({ maxLength: 3 }), fc.integer({ min: -5, max: 5 }))
    const condition: fc.Arbitrary<Condition> = fc.oneof(
      fc.record({
        column: fc.constantFrom("id", "staff_id", "start_ms"),
        op: fc.constantFrom("eq" as const, "ne" as const, "lt" as const, "lte" as const, "gt" as const, "gte" as const),
        value
      }),
      fc.record({
        column: fc.constantFrom("id", "staff_id", "start_ms"),
        op: fc.constant("in" as const),
        value: fc.array(value, { maxLength: 4 })
      })
    )
    const listQuery: fc.Arbitrary<ListQuery> = fc.record(
      { where: fc.array(condition, { maxLength: 4 }), after: fc.array(value, { maxLength: 3 }) },
      { requiredKeys: [] }
    )
    const tenants = fc.constantFrom(undefined, tenant, { account_id: "acc_2", environment: "production" } as const)
    for (const dialect of [sqliteDialect, postgresDialect]) {
      // One memo for every run: later queries of a shape take the text built for an earlier one.
      const statement = statementMemo(dialect, shapeOf(spec))
      fc.assert(
        fc.property(fc.array(fc.tuple(listQuery, tenants), { minLength: 1, maxLength: 6 }), (queries) => {
          for (const [query, inTenant] of queries) {
            for (const again of [false, true]) {
              const expected: Array<unknown> = []
              const text = `SELECT x ${whereSql(dialect, shapeOf(spec), query, inTenant, expected)}`
              const params: Array<unknown> = []
              expect([statement("select", [], query, inTenant, params, (where) => `SELECT x ${where}`), params, again]).toEqual([
                text,
                expected,
                again
              ])
            }
          }
        }),
        { numRuns: 300 }
      )
    }
  })
})
