/**
 * The in-memory storage's indexes narrow a query to a run of rows; they must never change its
 * answer. Random tables, large enough to be indexed, take random writes (committed, undone
 * by a failure, or still open while read) and random queries, and every answer is compared
 * with a plain filter and sort of what was written.
 */
import { Effect, Exit } from "effect"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { makeMemoryStorage } from "../../adapters/memory/storage.js"
import { ORDER_FROM_ROWS } from "../../adapters/memory/ordered.js"
import type { CollectionSpec, Condition, IndexValue, ListQuery } from "../../src/ports/storage.js"
import { Tenant, type TenantId } from "../../src/ports/tenant.js"

interface Item {
  readonly id: string
  readonly kind: string
  readonly rank: number
  readonly tag: string | null
}

const indexes: CollectionSpec<Item>["indexes"] = {
  kind: { type: "text", get: (item) => item.kind },
  rank: { type: "integer", get: (item) => item.rank },
  tag: { type: "text", get: (item) => item.tag }
}
/** Lists ordered by two columns (sorted), by one and by id alone (walked along their order). */
const specs: ReadonlyArray<CollectionSpec<Item>> = [
  { name: "items_by_tag_and_rank", indexes, order: ["tag", "rank"] },
  { name: "items_by_rank", indexes, order: ["rank"] },
  { name: "items_by_id", indexes, order: [] }
]
const COLUMNS = ["id", "kind", "rank", "tag"] as const

const tenants: ReadonlyArray<TenantId> = [
  { account_id: "acc_a", environment: "sandbox" },
  { account_id: "acc_a", environment: "production" },
  { account_id: "acc_b", environment: "sandbox" }
]

/** What a row must satisfy: comparisons never match null, as in SQL. */
const meets = (item: Item, conditions: ReadonlyArray<Condition>) =>
  conditions.every((c) => {
    const v = item[c.column as keyof Item] as IndexValue
    if (c.op === "in") return c.value.includes(v)
    if (c.op === "eq") return v === c.value
    if (c.op === "ne") return v !== c.value
    if (v === null || c.value === null) return false
    return c.op === "lt" ? v < c.value : c.op === "lte" ? v <= c.value : c.op === "gt" ? v > c.value : v >= c.value
  })

const compare = (a: IndexValue, b: IndexValue) => (a === b ? 0 : a === null ? -1 : b === null ? 1 : a < b ? -1 : 1)
const keyOf = (spec: CollectionSpec<Item>, item: Item): ReadonlyArray<IndexValue> => [
  ...spec.order.map((column) => item[column as keyof Item] as IndexValue),
  item.id
]
const compareKeys = (a: ReadonlyArray<IndexValue>, b: ReadonlyArray<IndexValue>) =>
  a.reduce<number>((found, value, i) => found || compare(value, b[i] ?? null), 0)

/** The answer of `list`, from the items themselves. */
const expected = (spec: CollectionSpec<Item>, items: Iterable<Item>, query: ListQuery): ReadonlyArray<string> => {
  const after = query.after
  const chosen = [...items]
    .filter((item) => meets(item, query.where ?? []) && (after === undefined || compareKeys(keyOf(spec, item), after) > 0))
    .sort((a, b) => compareKeys(keyOf(spec, a), keyOf(spec, b)))
  return (query.limit === undefined ? chosen : chosen.slice(0, query.limit)).map((item) => item.id)
}

const ids = fc.integer({ min: 0, max: ORDER_FROM_ROWS * 3 }).map((n) => `itm_${String(n).padStart(3, "0")}`)
const item = fc.record({
  id: ids,
  kind: fc.constantFrom("a", "b", "c", "d"),
  rank: fc.integer({ min: -5, max: 40 }),
  tag: fc.constantFrom(null, "x", "y", "z")
})
type Write = { readonly put: Item } | { readonly remove: string }
const write: fc.Arbitrary<Write> = fc.oneof(
  { weight: 4, arbitrary: item.map((put) => ({ put })) },
  { weight: 1, arbitrary: ids.map((remove) => ({ remove })) }
)
/** Mostly values of the column's own type; now and then another type, or null. */
const valueFor = (column: string): fc.Arbitrary<IndexValue> =>
  fc.oneof(
    {
      weight: 6,
      arbitrary: column === "rank"
        ? fc.integer({ min: -8, max: 44 })
        : column === "id"
        ? ids
        : fc.constantFrom("a", "b", "c", "x", "y", "z", "")
    },
    { weight: 1, arbitrary: fc.constantFrom<IndexValue>(null, 3, "7") }
  )
const condition: fc.Arbitrary<Condition> = fc.constantFrom(...COLUMNS).chain((column) =>
  fc.oneof(
    fc.record({
      column: fc.constant(column),
      op: fc.constantFrom("eq" as const, "ne" as const, "lt" as const, "lte" as const, "gt" as const, "gte" as const),
      value: valueFor(column)
    }),
    fc.record({ column: fc.constant(column), op: fc.constant("in" as const), value: fc.array(valueFor(column), { maxLength: 4 }) })
  )
)
/** A query of a list ordered as `spec` is, its cursor shaped like that list's keys. */
const queryOf = (spec: CollectionSpec<Item>): fc.Arbitrary<ListQuery> =>
  fc.record(
    {
      where: fc.array(condition, { maxLength: 4 }),
      after: fc.tuple(...spec.order.map((column) => valueFor(column)), ids),
      limit: fc.integer({ min: 1, max: 30 })
    },
    { requiredKeys: ["where"] }
  )
type Step =
  | { readonly commit: ReadonlyArray<Write> }
  | { readonly undo: ReadonlyArray<Write>; readonly read: ListQuery }
  | { readonly read: ListQuery }
const stepOf = (query: fc.Arbitrary<ListQuery>): fc.Arbitrary<Step> =>
  fc.oneof(
    { weight: 2, arbitrary: fc.array(write, { maxLength: 12 }).map((commit) => ({ commit })) },
    { weight: 1, arbitrary: fc.record({ undo: fc.array(write, { minLength: 1, maxLength: 6 }), read: query }) },
    { weight: 3, arbitrary: query.map((read) => ({ read })) }
  )

describe("the in-memory storage's indexes", () => {
  it.each(specs)("answer every query of $name as a scan of the rows would, in and out of transactions", async (spec) => {
    await fc.assert(
      fc.asyncProperty(
        // Each tenant starts with twice the rows from which a table is indexed.
        fc.array(fc.array(item, { minLength: ORDER_FROM_ROWS * 2, maxLength: ORDER_FROM_ROWS * 2 }), { minLength: 3, maxLength: 3 }),
        fc.array(fc.tuple(fc.integer({ min: 0, max: 2 }), stepOf(queryOf(spec))), { minLength: 1, maxLength: 24 }),
        async (seed, steps) => {
          const storage = await Effect.runPromise(makeMemoryStorage)
          const items = storage.collection(spec)
          /** What each tenant has committed. */
          const model = tenants.map(() => new Map<string, Item>())
          const apply = (rows: Map<string, Item>, writes: ReadonlyArray<Write>) => {
            for (const w of writes) {
              if ("put" in w) rows.set(w.put.id, w.put)
              else rows.delete(w.remove)
            }
          }
          const writeAll = (writes: ReadonlyArray<Write>) =>
            Effect.forEach(writes, (w) => ("put" in w ? items.update(w.put) : items.remove(w.remove)), { discard: true })
          const listed = (q: ListQuery) => Effect.map(items.list(q), (found) => found.map((i) => i.id))
          const run = <A>(tenant: number, effect: Effect.Effect<A, any, Tenant>) =>
            Effect.runPromiseExit(Effect.provideService(effect, Tenant, tenants[tenant]!))

          for (const [tenant, seeded] of seed.entries()) {
            for (const [n, fields] of seeded.entries()) {
              const first = { ...fields, id: `itm_${String(n).padStart(3, "0")}` }
              await run(tenant, items.update(first))
              model[tenant]!.set(first.id, first)
            }
          }
          for (const [tenant, s] of steps) {
            const rows = model[tenant]!
            if ("commit" in s) {
              expect(Exit.isSuccess(await run(tenant, storage.transaction(writeAll(s.commit))))).toBe(true)
              apply(rows, s.commit)
            } else if ("undo" in s) {
              // Read with the transaction's own writes pending, then undone by its failure.
              const pending = new Map(rows)
              apply(pending, s.undo)
              const seen: Array<ReadonlyArray<string>> = []
              const exit = await run(
                tenant,
                storage.transaction(Effect.zipRight(
                  writeAll(s.undo),
                  Effect.flatMap(listed(s.read), (found) => {
                    seen.push(found)
                    return Effect.fail("undone")
                  })
                ))
              )
              expect(Exit.isFailure(exit)).toBe(true)
              expect(seen[0]).toEqual(expected(spec, pending.values(), s.read))
            } else {
              const exit = await run(tenant, listed(s.read))
              expect(exit).toEqual(Exit.succeed(expected(spec, rows.values(), s.read)))
              const where = s.read.where ?? []
              const grouped = await run(tenant, items.listColumns({ groupBy: "kind", columns: ["id", "rank"], where }))
              const byKind = new Map<IndexValue, Array<string>>()
              for (const i of rows.values()) if (meets(i, where)) byKind.set(i.kind, [...(byKind.get(i.kind) ?? []), `${i.id}:${i.rank}`])
              const pairs = (columns: ReadonlyArray<ReadonlyArray<IndexValue>>) =>
                columns[0]!.map((id, n) => `${id}:${columns[1]![n]}`).sort()
              expect(Exit.isSuccess(grouped) && new Map([...grouped.value].map(([kind, columns]) => [kind, pairs(columns)])))
                .toEqual(new Map([...byKind].map(([kind, found]) => [kind, found.sort()])))
              const across = await Effect.runPromise(items.listAcrossTenants({ where }))
              const all = model.flatMap((m) => [...m.values()].filter((i) => meets(i, where)))
              expect(across.map((row) => row.doc.id).sort()).toEqual(all.map((i) => i.id).sort())
            }
          }
        }
      ),
      { numRuns: 100 }
    )
  })
})
