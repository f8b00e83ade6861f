/**
 * SQLite storage over `@effect/sql-sqlite-node`. Documents are JSON in one table per
 * collection, next to their index columns; events go to an AUTOINCREMENT log.
 *
 * Transactions. `SqliteClient` keeps one connection behind a one-permit semaphore and would
 * begin its transactions with a deferred `BEGIN`, which lets two processes interleave a
 * read-check-write and then fail with `SQLITE_BUSY_SNAPSHOT`. So a transaction here reserves
 * the connection (`sql.reserve` holds the client's semaphore until the scope closes), runs
 * `BEGIN IMMEDIATE` (taking the database's write lock up front, retried with a short backoff
 * if it stays busy beyond `busy_timeout`), and provides `SqlClient.TransactionConnection`
 * so every statement of the effect — ours and any `sql` query — runs in it. Commit and
 * rollback are ours too, so a failed COMMIT stays a typed `StorageFailure` (the client's
 * `withTransaction` turns it into a defect). Nested calls join the open transaction.
 * Statements outside a transaction also hold the semaphore, so in one process a reader never
 * sees another fiber's uncommitted writes.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import type { Connection } from "@effect/sql/SqlConnection"
import type { SqlError } from "@effect/sql/SqlError"
import * as SqliteClient from "@effect/sql-sqlite-node/SqliteClient"
import { Cause, Clock, Context, Effect, Exit, Layer, Option, Schedule, Scope } from "effect"
import { StorageFailure } from "../../src/domain/errors.js"
import type { Event } from "../../src/events/catalogue.js"
import { CoreCollections } from "../../src/ports/collections.js"
import {
  type Collection,
  type CollectionSpec,
  type Condition,
  type IndexedRow,
  type IndexValue,
  type ListQuery,
  Storage,
  type StorageService,
  type StoredEvent
} from "../../src/ports/storage.js"
import { Tenant, type TenantId } from "../../src/ports/tenant.js"
import { migrateBase, migrateCollection, quote, type Run, tableOf } from "./migrations.js"

export interface SqliteStorageSettings {
  /**
   * How long a statement waits for another connection's lock before SQLITE_BUSY (5000 by
   * default). A `BEGIN IMMEDIATE` still busy after it is retried with a short backoff.
   */
  readonly busyTimeoutMs?: number
}

export interface SqliteStorageOptions extends SqliteStorageSettings {
  /** A file path, or ":memory:" for a private database that lives as long as the layer. */
  readonly filename: string
}

interface OpenTransaction {
  /** Run once the transaction has committed. */
  readonly afterCommit: Array<() => void>
}

const sqliteCode = (error: SqlError): string | undefined => {
  const cause = error.cause as { readonly code?: unknown } | undefined
  return typeof cause?.code === "string" ? cause.code : undefined
}

const sqliteMessage = (error: SqlError): string => {
  const cause = error.cause as { readonly message?: unknown } | undefined
  return typeof cause?.message === "string" ? cause.message : error.message
}

const failure = (what: string) => (error: SqlError): StorageFailure =>
  new StorageFailure({ detail: `${what}: ${sqliteMessage(error)}`, cause: error })

const isBusy = (error: SqlError): boolean => {
  const code = sqliteCode(error)
  return code !== undefined && (code.startsWith("SQLITE_BUSY") || code.startsWith("SQLITE_LOCKED"))
}

/**
 * Retries of a `BEGIN IMMEDIATE` that is still busy after `busy_timeout` (WAL recovery or
 * a checkpoint can return SQLITE_BUSY without waiting): 10 ms doubling, at most 250 ms,
 * jittered, 12 attempts. It runs on the live clock so a TestClock never stalls it.
 */
const busyRetry = Schedule.exponential("10 millis").pipe(
  Schedule.union(Schedule.spaced("250 millis")),
  Schedule.jittered,
  Schedule.intersect(Schedule.recurs(12))
)
const liveClock = Clock.make()

/** Comparison of a condition, with the reference adapter's null semantics. */
const conditionSql = (column: string, condition: Condition, params: Array<unknown>): string => {
  const c = quote(column)
  switch (condition.op) {
    case "eq":
      if (condition.value === null) return `${c} IS NULL`
      params.push(condition.value)
      return `${c} = ?`
    case "ne":
      // A null column differs from every non-null value.
      params.push(condition.value)
      return `${c} IS NOT ?`
    case "in": {
      const values = condition.value.filter((v) => v !== null)
      const withNull = values.length < condition.value.length
      if (values.length === 0) return withNull ? `${c} IS NULL` : "0"
      params.push(...values)
      const list = `${c} IN (${values.map(() => "?").join(", ")})`
      return withNull ? `(${list} OR ${c} IS NULL)` : list
    }
    default: {
      // lt/lte/gt/gte never match a null on either side: SQL's comparison with NULL.
      params.push(condition.value)
      const op = condition.op === "lt" ? "<" : condition.op === "lte" ? "<=" : condition.op === "gt" ? ">" : ">="
      return `${c} ${op} ?`
    }
  }
}

/**
 * Rows whose key (order columns, then id) is after `after`, nulls sorting first as in
 * `ORDER BY`. Without nulls in the cursor this is a row-value comparison; with one it is the
 * spelled-out lexicographic form, since `(NULL, …) > (NULL, …)` is NULL in SQL.
 */
const afterSql = (keys: ReadonlyArray<string>, after: ReadonlyArray<IndexValue>, params: Array<unknown>): string => {
  const values = keys.map((_, i) => after[i] ?? null)
  if (values.every((v) => v !== null)) {
    params.push(...values)
    return `(${keys.map(quote).join(", ")}) > (${keys.map(() => "?").join(", ")})`
  }
  const alternatives: Array<string> = []
  for (let i = 0; i < keys.length; i++) {
    const parts: Array<string> = []
    for (let j = 0; j < i; j++) {
      const v = values[j]
      if (v === null) parts.push(`${quote(keys[j]!)} IS NULL`)
      else {
        parts.push(`${quote(keys[j]!)} = ?`)
        params.push(v)
      }
    }
    const v = values[i]
    if (v === null) parts.push(`${quote(keys[i]!)} IS NOT NULL`)
    else {
      parts.push(`${quote(keys[i]!)} > ?`)
      params.push(v)
    }
    alternatives.push(`(${parts.join(" AND ")})`)
  }
  return `(${alternatives.join(" OR ")})`
}

const limitOf = (limit: number | undefined): number => (limit === undefined ? -1 : Math.max(0, Math.trunc(limit)))

interface EventRow {
  readonly seq: number
  readonly account_id: string
  readonly environment: TenantId["environment"]
  readonly doc: string
}

const storedEvent = (row: EventRow, tenant?: TenantId): StoredEvent => ({
  seq: row.seq,
  tenant: tenant ?? { account_id: row.account_id, environment: row.environment },
  event: JSON.parse(row.doc) as Event
})

/**
 * The storage service over the `SqliteClient` in context: sets the connection's pragmas,
 * migrates the event log and the core's collections, and prepares any other collection on
 * first use.
 */
export const makeSqliteStorageWith = (
  settings: SqliteStorageSettings = {}
): Effect.Effect<StorageService, StorageFailure, SqliteClient.SqliteClient> =>
  Effect.gen(function*() {
    const sql = yield* SqliteClient.SqliteClient
    const busyTimeoutMs = Math.max(0, Math.trunc(settings.busyTimeoutMs ?? 5000))

    const onConnection = (
      conn: Connection,
      text: string,
      params: ReadonlyArray<unknown>,
      what: string
    ): Effect.Effect<ReadonlyArray<any>, StorageFailure> =>
      Effect.mapError(conn.execute(text, params, undefined), failure(what))

    /**
     * Holds the connection for `f`: the open transaction's, else the client's single
     * connection reserved (its semaphore taken) until `f` ends. A hand-made scope, because
     * `Effect.scoped` costs several times more than the statement it would wrap.
     */
    const withConnection = <A, R>(
      f: (conn: Connection) => Effect.Effect<A, StorageFailure, R>
    ): Effect.Effect<A, StorageFailure, R> =>
      Effect.flatMap(Effect.serviceOption(SqlClient.TransactionConnection), (open) =>
        open._tag === "Some"
          ? f(open.value[0])
          : Effect.flatMap(Scope.make(), (scope) =>
            Scope.extend(sql.reserve, scope).pipe(
              Effect.mapError(failure("acquire connection")),
              Effect.flatMap(f),
              Effect.onExit((exit) => Scope.close(scope, exit))
            )))

    /** One statement, in the open transaction or alone. */
    const run: Run = (text, params, what) => withConnection((conn) => onConnection(conn, text, params, what))

    /** Like `run`, rows as arrays of values: cheaper than objects for thousands of rows. */
    const runValues = (text: string, params: ReadonlyArray<unknown>, what: string) =>
      withConnection((conn) => Effect.mapError(conn.executeValues(text, params), failure(what)))

    const beginImmediate = (conn: Connection) => conn.execute("BEGIN IMMEDIATE", [], undefined)

    const begin = (conn: Connection): Effect.Effect<void, StorageFailure> =>
      beginImmediate(conn).pipe(
        Effect.catchAll((error) => {
          if (isBusy(error)) {
            return beginImmediate(conn).pipe(
              Effect.retry({ schedule: busyRetry, while: isBusy }),
              Effect.withClock(liveClock)
            )
          }
          // A connection left inside a transaction (a ROLLBACK that failed): end it, retry.
          if (/within a transaction/.test(sqliteMessage(error))) {
            return Effect.zipRight(Effect.ignore(conn.execute("ROLLBACK", [], undefined)), beginImmediate(conn))
          }
          return Effect.fail(error)
        }),
        Effect.mapError(failure("begin transaction")),
        Effect.asVoid
      )

    const rollback = (conn: Connection) =>
      conn.execute("ROLLBACK", [], undefined).pipe(
        Effect.catchAll((error) =>
          // SQLite has already rolled back after some errors (SQLITE_FULL, SQLITE_IOERR).
          /no transaction is active/.test(sqliteMessage(error))
            ? Effect.void
            : Effect.logError("slotwise sqlite: rollback failed", error)
        )
      )

    /**
     * The transactions this adapter has open, by connection (one at most: the client has
     * one). A transaction joined from elsewhere (`sql.withTransaction`) has no entry.
     */
    const opened = new WeakMap<Connection, OpenTransaction>()

    const transaction = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E | StorageFailure, R> =>
      Effect.flatMap(Effect.serviceOption(SqlClient.TransactionConnection), (open) =>
        open._tag === "Some"
          ? effect
          : Effect.uninterruptibleMask((restore) =>
            Effect.flatMap(Scope.make(), (scope) =>
              Effect.gen(function*() {
                const conn = yield* restore(Effect.mapError(Scope.extend(sql.reserve, scope), failure("acquire connection")))
                yield* begin(conn)
                const state: OpenTransaction = { afterCommit: [] }
                opened.set(conn, state)
                const exit = yield* Effect.exit(
                  Effect.mapInputContext(restore(effect), (context: Context.Context<R>) =>
                    Context.add(context, SqlClient.TransactionConnection, [conn, 0] as const))
                )
                opened.delete(conn)
                if (Exit.isFailure(exit)) {
                  yield* rollback(conn)
                  return yield* exit
                }
                const committed = yield* Effect.exit(conn.execute("COMMIT", [], undefined))
                if (Exit.isFailure(committed)) {
                  yield* rollback(conn)
                  return yield* Effect.failCause(Cause.map(committed.cause, failure("commit")))
                }
                for (const f of state.afterCommit) f()
                return exit.value
              }).pipe(Effect.onExit((exit) => Scope.close(scope, exit)))
            )
          ))

    /** A write: in the open transaction, or in one of its own. */
    const write = <A, R>(effect: Effect.Effect<A, StorageFailure, R>) => transaction(effect)

    // Connection settings, then the schema, under the write lock.
    yield* run(`PRAGMA busy_timeout = ${busyTimeoutMs}`, [], "set busy_timeout")
    yield* run("PRAGMA journal_mode = WAL", [], "set journal_mode")
    yield* run("PRAGMA synchronous = NORMAL", [], "set synchronous")
    yield* run("PRAGMA foreign_keys = ON", [], "set foreign_keys")

    /** Specs whose table this process has migrated (committed). */
    const ready = new WeakSet<CollectionSpec<any>>()
    const markReady = (spec: CollectionSpec<any>) =>
      Effect.flatMap(Effect.serviceOption(SqlClient.TransactionConnection), (open) =>
        Effect.sync(() => {
          // In a foreign transaction we cannot tell whether it commits: check again next time.
          if (open._tag === "Some") opened.get(open.value[0])?.afterCommit.push(() => ready.add(spec))
        }))

    yield* transaction(Effect.gen(function*() {
      yield* migrateBase(run)
      for (const spec of CoreCollections) {
        yield* migrateCollection(run, spec)
        yield* markReady(spec)
      }
    }))

    /** Prepares a spec's table once (idempotently, under the write lock) before first use. */
    const ensure = (spec: CollectionSpec<any>): Effect.Effect<void, StorageFailure> =>
      Effect.suspend(() =>
        ready.has(spec) ? Effect.void : transaction(Effect.zipRight(migrateCollection(run, spec), markReady(spec)))
      )

    const collections = new WeakMap<CollectionSpec<any>, Collection<any>>()

    const makeCollection = <A extends { readonly id: string }>(spec: CollectionSpec<A>): Collection<A> => {
      const table = quote(tableOf(spec))
      const name = spec.name
      const columns = Object.keys(spec.indexes)
      const getters = columns.map((column) => spec.indexes[column]!.get)
      const known = new Set(["id", ...columns])
      const keys = [...spec.order, "id"]
      const orderBy = `ORDER BY ${keys.map(quote).join(", ")}`
      const indexColumns = ["id", ...columns].map(quote).join(", ")
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
        listAcrossTenants: `${name}: listAcrossTenants`
      }

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

      /** `WHERE …` and its parameters for a query; undefined-column conditions fail. */
      const whereOf = (
        query: ListQuery,
        tenant: TenantId | undefined
      ): Effect.Effect<{ readonly clause: string; readonly params: Array<unknown> }, StorageFailure> =>
        Effect.suspend(() => {
          const parts: Array<string> = []
          const params: Array<unknown> = []
          if (tenant !== undefined) {
            parts.push("account_id = ?", "environment = ?")
            params.push(tenant.account_id, tenant.environment)
          }
          for (const condition of query.where ?? []) {
            if (!known.has(condition.column)) {
              return Effect.fail(new StorageFailure({ detail: `${name}: no index column ${condition.column}` }))
            }
            parts.push(conditionSql(condition.column, condition, params))
          }
          if (query.after !== undefined) parts.push(afterSql(keys, query.after, params))
          return Effect.succeed({ clause: parts.length === 0 ? "" : `WHERE ${parts.join(" AND ")}`, params })
        })

      const names = ["id", ...columns]
      /** Rows of values for `columns`, as objects keyed by column. */
      const rowOf = (columns: ReadonlyArray<string>) => (values: ReadonlyArray<unknown>): IndexedRow => {
        const row: Record<string, unknown> = {}
        for (let i = 0; i < columns.length; i++) row[columns[i]!] = values[i]
        return row as unknown as IndexedRow
      }
      const indexedRow = rowOf(names)

      const select = (columnsSql: string, query: ListQuery, what: string) =>
        Effect.flatMap(Tenant, (tenant) =>
          Effect.flatMap(whereOf(query, tenant), ({ clause, params }) => {
            params.push(limitOf(query.limit))
            return run(`SELECT ${columnsSql} FROM ${table} ${clause} ${orderBy} LIMIT ?`, params, what)
          }))

      const parseDocs = (rows: ReadonlyArray<{ readonly doc: string }>, operation: string) =>
        Effect.try({
          try: () => rows.map((row) => JSON.parse(row.doc) as A),
          catch: (cause) => new StorageFailure({ detail: `${operation}: corrupt document`, cause })
        })

      const prepared = ensure(spec)

      return {
        spec,
        get: (id) =>
          Effect.zipRight(
            prepared,
            Effect.flatMap(Tenant, (tenant) =>
              Effect.flatMap(
                run(getSql, [tenant.account_id, tenant.environment, id], what.get),
                (rows) => Effect.map(parseDocs(rows, what.get), (docs) => Option.fromNullable(docs[0]))
              ))
          ),
        insert: (doc) =>
          write(Effect.zipRight(
            prepared,
            Effect.flatMap(Tenant, (tenant) =>
              Effect.flatMap(rowParams(tenant, doc), (params) =>
                run(insertSql, params, what.insert).pipe(
                  Effect.mapError((error) =>
                    error.cause !== undefined &&
                      sqliteCode(error.cause as SqlError)?.startsWith("SQLITE_CONSTRAINT") === true
                      ? new StorageFailure({ detail: `${name}: duplicate id ${doc.id}`, cause: error.cause })
                      : error
                  )
                )))
          )).pipe(Effect.asVoid),
        update: (doc) =>
          write(Effect.zipRight(
            prepared,
            Effect.flatMap(Tenant, (tenant) =>
              Effect.flatMap(rowParams(tenant, doc), (params) => run(updateSql, params, what.update)))
          )).pipe(Effect.asVoid),
        remove: (id) =>
          write(Effect.zipRight(
            prepared,
            Effect.flatMap(Tenant, (tenant) =>
              run(removeSql, [tenant.account_id, tenant.environment, id], what.remove))
          )).pipe(Effect.asVoid),
        list: (query) =>
          Effect.zipRight(
            prepared,
            Effect.flatMap(select("doc", query, what.list), (rows) => parseDocs(rows, what.list))
          ),
        listIndexes: (query) => {
          const wanted = query.columns
          if (wanted !== undefined && wanted.some((c) => !known.has(c))) {
            return Effect.fail(new StorageFailure({ detail: `${what.listIndexes}: unknown column in ${wanted.join(", ")}` }))
          }
          const selected = wanted === undefined
            ? names
            : [...(query.includeId === false ? [] : ["id"]), ...wanted.filter((c) => c !== "id")]
          const toRow = wanted === undefined ? indexedRow : rowOf(selected)
          return Effect.zipRight(
            prepared,
            Effect.flatMap(Tenant, (tenant) =>
              Effect.flatMap(whereOf(query, tenant), ({ clause, params }) => {
                params.push(limitOf(query.limit))
                const columnsSql = wanted === undefined ? indexColumns : selected.map(quote).join(", ")
                return runValues(
                  `SELECT ${columnsSql} FROM ${table} ${clause} ${query.ordered === false ? "" : orderBy} LIMIT ?`,
                  params,
                  what.listIndexes
                )
              }))
          ).pipe(Effect.map((rows) => rows.map(toRow)))
        },
        listAcrossTenants: (query) =>
          Effect.zipRight(
            prepared,
            Effect.flatMap(whereOf(query, undefined), ({ clause, params }) => {
              params.push(limitOf(query.limit))
              return run(
                `SELECT account_id, environment, doc FROM ${table} ${clause} ${orderBy}, account_id, environment LIMIT ?`,
                params,
                what.listAcrossTenants
              )
            }).pipe(
              Effect.flatMap((rows) =>
                Effect.map(parseDocs(rows, what.listAcrossTenants), (docs) =>
                  docs.map((doc, i) => ({
                    tenant: { account_id: rows[i]!.account_id, environment: rows[i]!.environment } as TenantId,
                    doc
                  })))
              )
            )
          )
      }
    }

    const collection = <A extends { readonly id: string }>(spec: CollectionSpec<A>): Collection<A> => {
      let found = collections.get(spec) as Collection<A> | undefined
      if (found === undefined) collections.set(spec, found = makeCollection(spec))
      return found
    }

    const parseEvents = (rows: ReadonlyArray<EventRow>, tenant?: TenantId) =>
      Effect.try({
        try: () => rows.map((row) => storedEvent(row, tenant)),
        catch: (cause) => new StorageFailure({ detail: "events: corrupt event", cause })
      })

    const events: StorageService["events"] = {
      append: (event) =>
        write(Effect.flatMap(Tenant, (tenant) =>
          run(
            "INSERT INTO events (account_id, environment, id, type, doc) VALUES (?, ?, ?, ?, ?)",
            [tenant.account_id, tenant.environment, event.id, event.type, JSON.stringify(event)],
            "events: append"
          ))).pipe(Effect.asVoid),
      get: (id) =>
        Effect.flatMap(Tenant, (tenant) =>
          run(
            "SELECT seq, account_id, environment, doc FROM events WHERE id = ? AND account_id = ? AND environment = ?",
            [id, tenant.account_id, tenant.environment],
            "events: get"
          ).pipe(
            Effect.flatMap((rows) => parseEvents(rows as ReadonlyArray<EventRow>, tenant)),
            Effect.map((stored) => Option.map(Option.fromNullable(stored[0]), (s) => s.event))
          )),
      read: ({ after, limit, types }) =>
        Effect.flatMap(Tenant, (tenant) => {
          const params: Array<unknown> = [tenant.account_id, tenant.environment, after]
          let filter = ""
          if (types !== undefined) {
            filter = types.length === 0 ? " AND 0" : ` AND type IN (${types.map(() => "?").join(", ")})`
            params.push(...types)
          }
          params.push(limitOf(limit))
          return run(
            "SELECT seq, account_id, environment, doc FROM events " +
              `WHERE account_id = ? AND environment = ? AND seq > ?${filter} ORDER BY seq LIMIT ?`,
            params,
            "events: read"
          ).pipe(Effect.flatMap((rows) => parseEvents(rows as ReadonlyArray<EventRow>, tenant)))
        }),
      lastSeq: run(
        // AUTOINCREMENT's high-water mark: like the reference adapter's counter, it counts
        // erased events too, so a seq is never handed out twice.
        "SELECT COALESCE((SELECT seq FROM sqlite_sequence WHERE name = 'events'), 0) AS seq",
        [],
        "events: lastSeq"
      ).pipe(Effect.map((rows) => Number(rows[0]?.seq ?? 0))),
      readAcrossTenants: ({ after, limit }) =>
        run(
          "SELECT seq, account_id, environment, doc FROM events WHERE seq > ? ORDER BY seq LIMIT ?",
          [after, limitOf(limit)],
          "events: readAcrossTenants"
        ).pipe(Effect.flatMap((rows) => parseEvents(rows as ReadonlyArray<EventRow>)))
    }

    const eraseTenant = write(Effect.flatMap(Tenant, (tenant) =>
      Effect.gen(function*() {
        const tables = (yield* run(
          "SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'c\\_%' ESCAPE '\\'",
          [],
          "eraseTenant: list tables"
        )) as ReadonlyArray<{ readonly name: string }>
        for (const { name } of tables) {
          yield* run(
            `DELETE FROM ${quote(name)} WHERE account_id = ? AND environment = ?`,
            [tenant.account_id, tenant.environment],
            `eraseTenant: ${name}`
          )
        }
        yield* run(
          "DELETE FROM events WHERE account_id = ? AND environment = ?",
          [tenant.account_id, tenant.environment],
          "eraseTenant: events"
        )
      })))

    return { collection, events, transaction, eraseTenant } satisfies StorageService
  })

/** The storage service with the default settings. */
export const makeSqliteStorage: Effect.Effect<StorageService, StorageFailure, SqliteClient.SqliteClient> =
  makeSqliteStorageWith()

/** Storage on the `SqliteClient` already in context (to share the client with other adapters). */
export const SqliteStorageFromClient = (
  settings: SqliteStorageSettings = {}
): Layer.Layer<Storage, StorageFailure, SqliteClient.SqliteClient> =>
  Layer.effect(Storage, makeSqliteStorageWith(settings))

/** Storage on its own SQLite connection to `filename`, closed with the layer. */
export const SqliteStorageLive = (options: SqliteStorageOptions): Layer.Layer<Storage, StorageFailure> =>
  SqliteStorageFromClient(options).pipe(
    Layer.provide(
      SqliteClient.layer({ filename: options.filename }).pipe(
        // better-sqlite3 throws when the file cannot be opened: keep that typed.
        Layer.catchAllCause((cause) =>
          Layer.fail(
            new StorageFailure({ detail: `cannot open SQLite database ${options.filename}`, cause: Cause.squash(cause) })
          )
        )
      )
    )
  )
