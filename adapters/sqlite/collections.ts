/**
 * The SQLite `Collection`: documents are JSON in one table per collection (`c_<name>`), next
 * to their index columns. A collection's table is migrated once per process, before its
 * first use (the core's collections at start-up).
 */
import { Effect, Option } from "effect"
import { StorageFailure } from "../../src/domain/errors.js"
import type {
  Collection,
  CollectionRead,
  CollectionSpec,
  ColumnValues,
  ColumnsQuery,
  IndexedRow,
  IndexValue,
  ListQuery,
  ReadResults,
  StorageService
} from "../../src/ports/storage.js"
import type { Tenant, TenantId } from "../../src/ports/tenant.js"
import { sqliteDialect } from "../sql/dialects.js"
import { quote, statementMemo, tableLayoutOf } from "../sql/query.js"
import { migrateCollection } from "./migrations.js"
import { codeOf, execute, limitSql, parseAll, parsed, requireKnown, type Statements } from "./query.js"
import type { Transactions } from "./transactions.js"

export interface Collections {
  /** The collection of `spec`, made once per spec. */
  readonly collection: <A extends { readonly id: string }>(spec: CollectionSpec<A>) => Collection<A>
  /** Migrates `spec`'s table inside the open transaction; marks it ready once committed. */
  readonly prepare: (spec: CollectionSpec<any>) => Effect.Effect<void, StorageFailure>
  readonly readMany: NonNullable<StorageService["readMany"]>
}

/** A collection's reads, each run in the caller's step on its connection. */
type ReadRuns = {
  readonly [Op in CollectionRead<unknown>["op"]]: (
    statements: Statements,
    tenant: TenantId,
    query: Extract<CollectionRead<unknown>, { readonly op: Op }>["query"]
  ) => unknown
}

export const makeCollections = (tx: Transactions): Collections => {
  const { acrossTenants, forTenant, write } = tx

  /** Each made collection's reads, for `readMany`. */
  const readRuns = new WeakMap<CollectionSpec<any>, ReadRuns>()

  /** Specs whose table this process has migrated (committed). */
  const ready = new WeakSet<CollectionSpec<any>>()
  const prepare = (spec: CollectionSpec<any>) =>
    Effect.zipRight(migrateCollection(tx.run, spec), tx.afterCommit(Effect.sync(() => ready.add(spec))))

  /** Prepares a spec's table once (idempotently, under the write lock) before first use. */
  const ensure = (spec: CollectionSpec<any>): Effect.Effect<void, StorageFailure> =>
    Effect.suspend(() => (ready.has(spec) ? Effect.void : tx.transaction(prepare(spec))))

  const makeCollection = <A extends { readonly id: string }>(spec: CollectionSpec<A>): Collection<A> => {
    const { table, columns, getters, shape, orderBy, names } = tableLayoutOf(sqliteDialect, spec)
    const name = spec.name
    const statement = statementMemo(sqliteDialect, shape)
    const placeholders = Array.from({ length: columns.length + 4 }, () => "?").join(", ")
    const insertColumns = `account_id, environment, id, ${columns.map((c) => `${quote(c)}, `).join("")}doc`
    const insertSql = `INSERT INTO ${table} (${insertColumns}) VALUES (${placeholders})`
    const updateSql = `${insertSql} ON CONFLICT (account_id, environment, id) DO UPDATE SET ` +
      [...columns.map(quote), "doc"].map((c) => `${c} = excluded.${c}`).join(", ")
    const getSql = `SELECT doc FROM ${table} WHERE account_id = ? AND environment = ? AND id = ?`
    const removeSql = `DELETE FROM ${table} WHERE account_id = ? AND environment = ? AND id = ?`

    const what = {
      get: `${name}: get`,
      insert: `${name}: insert`,
      update: `${name}: update`,
      remove: `${name}: remove`,
      list: `${name}: list`,
      listIndexes: `${name}: listIndexes`,
      listColumns: `${name}: listColumns`,
      listAcrossTenants: `${name}: listAcrossTenants`
    }

    /** The row of a document: tenant, id, index values, JSON. */
    const rowParams = (tenant: TenantId, doc: A): Array<unknown> => {
      try {
        const params: Array<unknown> = [tenant.account_id, tenant.environment, doc.id]
        for (const get of getters) params.push(get(doc) ?? null)
        params.push(JSON.stringify(doc))
        return params
      } catch (cause) {
        throw new StorageFailure({ detail: `${name}: cannot index or serialise ${doc.id}`, cause })
      }
    }

    /** Rows of values for `selected`, as objects keyed by column. */
    const rowOf = (selected: ReadonlyArray<string>) => (values: ReadonlyArray<unknown>): IndexedRow => {
      const row: Record<string, unknown> = {}
      for (let i = 0; i < selected.length; i++) row[selected[i]!] = values[i]
      return row as unknown as IndexedRow
    }

    /** `effect`, after preparing the table if this process has not yet. */
    const withTable = <X, E, R>(effect: Effect.Effect<X, E, R>) => ready.has(spec) ? effect : Effect.zipRight(ensure(spec), effect)

    /** The reads, run on `statements` for `tenant` in the caller's step. */
    const runs = {
      list: (statements: Statements, tenant: TenantId, query: ListQuery): Array<A> => {
        const params: Array<unknown> = []
        const limit = limitSql(query.limit)
        const text = statement(
          `list${limit}`,
          [],
          query,
          tenant,
          params,
          (clause) => `SELECT doc FROM ${table} ${clause} ${orderBy}${limit}`
        )
        return parseAll<A>(what.list, execute(statements, text, params, what.list))
      },
      listIndexes: (statements: Statements, tenant: TenantId, query: ListQuery): Array<IndexedRow> => {
        const wanted = query.columns
        if (wanted !== undefined) requireKnown(shape, wanted)
        const selected = wanted === undefined
          ? names
          : ["id", ...wanted.filter((c) => c !== "id")]
        const params: Array<unknown> = []
        const order = query.ordered === false ? "" : orderBy
        const limit = limitSql(query.limit)
        const text = statement(
          `listIndexes ${order}${limit}`,
          selected,
          query,
          tenant,
          params,
          (clause) => `SELECT ${selected.map(quote).join(", ")} FROM ${table} ${clause} ${order}${limit}`
        )
        // Rows as arrays, made into objects here: cheaper for the thousands a slot list reads.
        return execute(statements, text, params, what.listIndexes, true).map(rowOf(selected))
      },
      listColumns: (
        statements: Statements,
        tenant: TenantId,
        { columns, groupBy, where = [] }: ColumnsQuery
      ): Map<IndexValue, ColumnValues> => {
        requireKnown(shape, [groupBy, ...columns])
        const params: Array<unknown> = []
        // A row per group, each column aggregated into a JSON array: parsing a few long
        // arrays costs half of what making thousands of rows does.
        const text = statement("listColumns", [groupBy, ...columns], { where }, tenant, params, (clause) => {
          const selected = [quote(groupBy), ...columns.map((c) => `json_group_array(${quote(c)})`)]
          return `SELECT ${selected.join(", ")} FROM ${table} ${clause} GROUP BY ${quote(groupBy)}`
        })
        const rows = execute(statements, text, params, what.listColumns, true) as Array<[IndexValue, ...Array<string>]>
        return parsed(what.listColumns, () =>
          new Map<IndexValue, ColumnValues>(
            rows.map(([key, ...arrays]) => [key, arrays.map((json) => JSON.parse(json) as Array<IndexValue>)])
          ))
      }
    }
    readRuns.set(spec, runs satisfies ReadRuns)

    return {
      spec,
      get: (id) =>
        withTable(forTenant((statements, tenant) =>
          Option.fromNullable(
            parseAll<A>(what.get, execute(statements, getSql, [tenant.account_id, tenant.environment, id], what.get))[0]
          )
        )),
      insert: (doc) =>
        withTable(write((statements, tenant) => {
          try {
            execute(statements, insertSql, rowParams(tenant, doc), what.insert)
          } catch (error) {
            const cause = error instanceof StorageFailure ? error.cause : error
            if (codeOf(cause)?.startsWith("SQLITE_CONSTRAINT") === true) {
              throw new StorageFailure({ detail: `${name}: duplicate id ${doc.id}`, cause })
            }
            throw error
          }
        })),
      update: (doc) =>
        withTable(write((statements, tenant) => {
          execute(statements, updateSql, rowParams(tenant, doc), what.update)
        })),
      remove: (id) =>
        withTable(write((statements, tenant) => {
          execute(statements, removeSql, [tenant.account_id, tenant.environment, id], what.remove)
        })),
      list: (query) => withTable(forTenant((statements, tenant) => runs.list(statements, tenant, query))),
      listIndexes: (query) => withTable(forTenant((statements, tenant) => runs.listIndexes(statements, tenant, query))),
      listColumns: (query) => withTable(forTenant((statements, tenant) => runs.listColumns(statements, tenant, query))),
      listAcrossTenants: (query) =>
        withTable(acrossTenants((statements) => {
          const params: Array<unknown> = []
          const limit = limitSql(query.limit)
          const text = statement(
            `listAcrossTenants${limit}`,
            [],
            query,
            undefined,
            params,
            (clause) => `SELECT account_id, environment, doc FROM ${table} ${clause} ${orderBy}, account_id, environment${limit}`
          )
          const rows = execute(statements, text, params, what.listAcrossTenants) as Array<
            { readonly account_id: string; readonly environment: TenantId["environment"]; readonly doc: string }
          >
          const docs = parseAll<A>(what.listAcrossTenants, rows)
          return docs.map((doc, i) => ({
            tenant: { account_id: rows[i]!.account_id, environment: rows[i]!.environment },
            doc
          }))
        }))
    }
  }

  const collections = new WeakMap<CollectionSpec<any>, Collection<any>>()
  const collection = <A extends { readonly id: string }>(spec: CollectionSpec<A>): Collection<A> => {
    let found = collections.get(spec) as Collection<A> | undefined
    if (found === undefined) collections.set(spec, found = makeCollection(spec))
    return found
  }

  /**
   * Runs the reads one after another in one step: one connection, and inside the open
   * transaction if there is one (the collections' tables prepared first, once).
   */
  const readMany = <const T extends ReadonlyArray<CollectionRead<any>>>(
    reads: T
  ): Effect.Effect<ReadResults<T>, StorageFailure, Tenant> => {
    const run = forTenant((statements, tenant) =>
      reads.map((read) => runsOf(read.spec)[read.op](statements, tenant, read.query as any)) as ReadResults<T>
    )
    const unprepared = reads.filter((read) => !ready.has(read.spec))
    return unprepared.length === 0 ? run : Effect.zipRight(Effect.forEach(unprepared, (read) => ensure(read.spec), { discard: true }), run)
  }

  /** The reads of `spec`'s collection, made with it (made now if it was not yet). */
  const runsOf = (spec: CollectionSpec<any>): ReadRuns => {
    const made = readRuns.get(spec)
    if (made !== undefined) return made
    collection(spec)
    return readRuns.get(spec)!
  }

  return { collection, prepare, readMany }
}

/** Deletes the tenant's documents from every collection table (inside a write). */
export const eraseTenantDocuments = (statements: Statements, tenant: TenantId): void => {
  const tables = execute(
    statements,
    "SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'c\\_%' ESCAPE '\\'",
    [],
    "eraseTenant: list tables"
  ) as ReadonlyArray<{ readonly name: string }>
  for (const { name } of tables) {
    execute(
      statements,
      `DELETE FROM ${quote(name)} WHERE account_id = ? AND environment = ?`,
      [tenant.account_id, tenant.environment],
      `eraseTenant: ${name}`
    )
  }
}
