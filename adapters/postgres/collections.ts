/**
 * One collection on its `c_<name>` table: documents as `json` next to their index columns.
 * Tenant-facing statements always filter on `(account_id, environment)`, the leading
 * columns of every index.
 */
import { Effect, Option } from "effect"
import { StorageFailure } from "../../src/domain/errors.js"
import type {
  Collection,
  CollectionRead,
  CollectionSpec,
  ColumnValues,
  IndexedRow,
  IndexValue,
  ListQuery
} from "../../src/ports/storage.js"
import type { TenantId } from "../../src/ports/tenant.js"
import { dialect, limitSql, quote, tableLayoutOf, unknownColumn, whereSql } from "./query.js"
import { codeOf, type QueryOptions, type Sql } from "./transactions.js"

/** Index reads come back as arrays of values, made into rows here. */
const ARRAYS: QueryOptions = { rows: "arrays" }
/** A page by a filter is planned for the filter's values (see `QueryOptions.plan`). */
const FILTERED_PAGE: QueryOptions = { plan: "each" }

/** One read of `readMany`: its text, a scalar subquery of one `json` value, and its answer from that value. */
export interface ComposedRead {
  readonly text: string
  readonly answer: (json: unknown) => unknown
}

/** A collection's reads, each composed into a `readMany` statement: parameters pushed onto `params`; unknown columns throw. */
export type CollectionReads = {
  readonly [Op in CollectionRead<unknown>["op"]]: (
    tenant: TenantId,
    query: Extract<CollectionRead<unknown>, { readonly op: Op }>["query"],
    params: Array<unknown>
  ) => ComposedRead
}

export const makeCollection = <A extends { readonly id: string }>(
  sql: Sql,
  spec: CollectionSpec<A>,
  /** Prepares the table before its first use in this process (a no-op once done). */
  ensure: Effect.Effect<void, StorageFailure>
): Collection<A> & { readonly reads: CollectionReads } => {
  const { table, columns, getters, shape, orderBy, names } = tableLayoutOf(dialect, spec)
  const name = spec.name
  const insertColumns = `account_id, environment, id, ${columns.map((c) => `${quote(c)}, `).join("")}doc`
  const placeholders = Array.from({ length: columns.length + 4 }, (_, i) => `$${i + 1}`).join(", ")
  const insertSql = `INSERT INTO ${table} (${insertColumns}) VALUES (${placeholders})`
  const updateSql = `${insertSql} ON CONFLICT (account_id, environment, id) DO UPDATE SET ` +
    [...columns.map(quote), "doc"].map((c) => `${c} = excluded.${c}`).join(", ")
  const getSql = `SELECT doc FROM ${table} WHERE account_id = $1 AND environment = $2 AND id = $3`
  const removeSql = `DELETE FROM ${table} WHERE account_id = $1 AND environment = $2 AND id = $3`

  /** Each operation's label in failures: `<collection>: <operation>`. */
  const what = Object.fromEntries(
    ["get", "insert", "update", "remove", "list", "listIndexes", "listColumns", "listAcrossTenants"].map((op) => [
      op,
      `${name}: ${op}`
    ])
  ) as Record<keyof Collection<A>, string>

  /** The row of a document: tenant, id, index values, JSON. */
  const rowParams = (tenant: TenantId, doc: A): Effect.Effect<Array<unknown>, StorageFailure> =>
    Effect.try({
      try: () => {
        const params: Array<unknown> = [tenant.account_id, tenant.environment, doc.id]
        for (const get of getters) params.push(get(doc) ?? null)
        params.push(JSON.stringify(doc))
        return params
      },
      catch: (cause) => new StorageFailure({ detail: `${name}: cannot index or serialise ${doc.id}`, cause })
    })

  /** A typed fault unless every column is `id` or an index column. */
  const unknownIn = (wanted: Iterable<string>): StorageFailure | undefined => unknownColumn(shape, wanted)

  /** `WHERE …` for a query, its parameters pushed onto `params`. */
  const whereOf = (
    query: ListQuery,
    tenant: TenantId | undefined,
    params: Array<unknown>
  ): Effect.Effect<string, StorageFailure> =>
    Effect.try({
      try: () => whereSql(dialect, shape, query, tenant, params),
      catch: (fault) => fault instanceof StorageFailure ? fault : new StorageFailure({ detail: `${name}: query`, cause: fault })
    })

  /** `effect`, after the table is ready. */
  const withTable = <X, E, R>(effect: Effect.Effect<X, E, R>) => Effect.zipRight(ensure, effect)

  const docs = (rows: ReadonlyArray<{ readonly doc: A }>): Array<A> => rows.map((row) => row.doc)

  /** `values` (a row's selected columns, in order) as an object keyed by column. */
  const rowOf = (selected: ReadonlyArray<string>, values: ReadonlyArray<IndexValue>): IndexedRow => {
    const row: Record<string, IndexValue> = {}
    for (let i = 0; i < selected.length; i++) row[selected[i]!] = values[i]!
    return row as IndexedRow
  }

  /** The columns `listIndexes` selects for `query`, or the unknown column it names. */
  const selectedFor = (query: ListQuery): ReadonlyArray<string> | StorageFailure => {
    const wanted = query.columns
    const unknown = wanted === undefined ? undefined : unknownIn(wanted)
    if (unknown !== undefined) return unknown
    return wanted === undefined ? names : ["id", ...wanted.filter((c) => c !== "id")]
  }

  /** Each read as one `json` value (a scalar subquery) and how to read its answer back: for `readMany`. */
  const reads: CollectionReads = {
    list: (tenant, query, params) => {
      const clause = whereSql(dialect, shape, query, tenant, params)
      // The order is the aggregate's own (a sorted subquery only usually keeps it).
      return {
        text: `(SELECT coalesce(json_agg(q.doc ORDER BY q.n), '[]') FROM ` +
          `(SELECT doc, row_number() OVER (${orderBy}) AS n FROM ${table} ${clause} ${orderBy}${limitSql(query.limit)}) AS q)`,
        answer: (json) => json as ReadonlyArray<A>
      }
    },
    listIndexes: (tenant, query, params) => {
      const selected = selectedFor(query)
      if (selected instanceof StorageFailure) throw selected
      const clause = whereSql(dialect, shape, query, tenant, params)
      const ordered = query.ordered !== false
      return {
        text: `(SELECT coalesce(json_agg(json_build_array(${selected.map((c) => `q.${quote(c)}`).join(", ")})` +
          `${ordered ? " ORDER BY q.n" : ""}), '[]') FROM ` +
          `(SELECT ${selected.map(quote).join(", ")}${ordered ? `, row_number() OVER (${orderBy}) AS n` : ""} FROM ${table} ${clause} ` +
          `${ordered ? orderBy : ""}${limitSql(query.limit)}) AS q)`,
        answer: (json) => (json as ReadonlyArray<ReadonlyArray<IndexValue>>).map((values) => rowOf(selected, values))
      }
    },
    listColumns: (tenant, { columns: wanted, groupBy, where = [] }, params) => {
      const unknown = unknownIn([groupBy, ...wanted])
      if (unknown !== undefined) throw unknown
      const clause = whereSql(dialect, shape, { where }, tenant, params)
      const arrays = wanted.map((c, i) => `json_agg(${quote(c)}) AS a${i}`)
      return {
        text: `(SELECT coalesce(json_agg(json_build_array(q.k${wanted.map((_, i) => `, q.a${i}`).join("")})), '[]') FROM ` +
          `(SELECT ${quote(groupBy)} AS k, ${arrays.join(", ")} FROM ${table} ${clause} GROUP BY ${quote(groupBy)}) AS q)`,
        answer: (json) =>
          new Map<IndexValue, ColumnValues>(
            (json as ReadonlyArray<[IndexValue, ...Array<Array<IndexValue>>]>).map(([key, ...values]) => [key, values])
          )
      }
    }
  }

  return {
    spec,
    reads,
    get: (id) =>
      withTable(sql.forTenant((tenant) =>
        Effect.map(
          sql.query<{ doc: A }>(getSql, [tenant.account_id, tenant.environment, id], what.get),
          (rows) => Option.fromNullable(rows[0]?.doc)
        )
      )),
    insert: (doc) =>
      withTable(sql.write((tenant) =>
        Effect.flatMap(rowParams(tenant, doc), (params) =>
          sql.query(insertSql, params, what.insert).pipe(
            Effect.mapError((error) =>
              codeOf(error.cause) === "23505"
                ? new StorageFailure({ detail: `${name}: duplicate id ${doc.id}`, cause: error.cause })
                : error
            ),
            Effect.asVoid
          ))
      )),
    update: (doc) =>
      withTable(
        sql.write((tenant) => Effect.flatMap(rowParams(tenant, doc), (params) => Effect.asVoid(sql.query(updateSql, params, what.update))))
      ),
    remove: (id) =>
      withTable(sql.write((tenant) => Effect.asVoid(sql.query(removeSql, [tenant.account_id, tenant.environment, id], what.remove)))),
    list: (query) =>
      withTable(sql.forTenant((tenant) => {
        const params: Array<unknown> = []
        return Effect.flatMap(whereOf(query, tenant, params), (clause) =>
          Effect.map(
            sql.query<{ doc: A }>(
              `SELECT doc FROM ${table} ${clause} ${orderBy}${limitSql(query.limit)}`,
              params,
              what.list,
              query.limit !== undefined && query.where !== undefined && query.where.length > 0 ? FILTERED_PAGE : undefined
            ),
            docs
          ))
      })),
    listIndexes: (query) =>
      withTable(sql.forTenant((tenant) => {
        const selected = selectedFor(query)
        if (selected instanceof StorageFailure) return Effect.fail(selected)
        const params: Array<unknown> = []
        return Effect.flatMap(whereOf(query, tenant, params), (clause) => {
          const text = `SELECT ${selected.map(quote).join(", ")} FROM ${table} ${clause} ` +
            `${query.ordered === false ? "" : orderBy}${limitSql(query.limit)}`
          // Rows as arrays, made into objects here: cheaper for the thousands a slot list reads.
          return Effect.map(sql.query<Array<IndexValue>>(text, params, what.listIndexes, ARRAYS), (rows) =>
            rows.map((values) => rowOf(selected, values)))
        })
      })),
    listColumns: ({ columns: wanted, groupBy, where = [] }) =>
      withTable(sql.forTenant((tenant) => {
        const unknown = unknownIn([groupBy, ...wanted])
        if (unknown !== undefined) return Effect.fail(unknown)
        const params: Array<unknown> = []
        return Effect.flatMap(whereOf({ where }, tenant, params), (clause) => {
          // A row per group, each column aggregated into one array (aggregates of one group
          // read its rows in the same order, so the arrays line up).
          const selected = [quote(groupBy), ...wanted.map((c) => `json_agg(${quote(c)})`)]
          const text = `SELECT ${selected.join(", ")} FROM ${table} ${clause} GROUP BY ${quote(groupBy)}`
          return Effect.map(
            sql.query<[IndexValue, ...Array<Array<IndexValue>>]>(text, params, what.listColumns, ARRAYS),
            (rows) => new Map<IndexValue, ColumnValues>(rows.map(([key, ...arrays]) => [key, arrays]))
          )
        })
      })),
    listAcrossTenants: (query) =>
      withTable(Effect.suspend(() => {
        const params: Array<unknown> = []
        return Effect.flatMap(whereOf(query, undefined, params), (clause) =>
          Effect.map(
            sql.query<{ account_id: string; environment: TenantId["environment"]; doc: A }>(
              `SELECT account_id, environment, doc FROM ${table} ${clause} ${orderBy}, account_id, environment${limitSql(query.limit)}${
                query.lock === "skip-locked" ? " FOR UPDATE SKIP LOCKED" : ""
              }`,
              params,
              what.listAcrossTenants
            ),
            (rows) => rows.map((row) => ({ tenant: { account_id: row.account_id, environment: row.environment }, doc: row.doc }))
          ))
      }))
  }
}
