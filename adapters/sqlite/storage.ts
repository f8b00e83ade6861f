/**
 * SQLite storage over better-sqlite3. Documents are JSON in one table per collection, next to
 * their index columns; events go to a log keyed by a seq that is never reused.
 *
 * Connections. A file gets two: a writer for every transaction and a reader for statements
 * outside one. Under WAL each reader statement sees exactly the transactions committed
 * before it, so it never sees another fiber's uncommitted writes and never waits for them.
 * A private `:memory:` database has one connection, and its reads outside a transaction wait
 * for the write lock instead.
 *
 * Transactions. The writer is held by a one-permit lock for the whole transaction, which
 * begins `IMMEDIATE` (taking the database's write lock up front, so two processes never
 * interleave a read-check-write; a `BEGIN` still busy after `busy_timeout` is retried with
 * a short backoff). The open transaction is a fiber-local value: every statement of the
 * effect, in any collection, runs on the writer inside it. Nested calls join it. A failed
 * COMMIT stays a typed `StorageFailure`, after a rollback.
 *
 * better-sqlite3 is synchronous, so a statement is a plain call inside one Effect step:
 * this is what keeps a booking creation's ten statements cheap (see README, "Stack notes").
 */
import Database from "better-sqlite3"
import { Clock, Context, Effect, type Exit, FiberRef, Layer, Option, Schedule, type Scope } from "effect"
import { StorageFailure } from "../../src/domain/errors.js"
import type { Event } from "../../src/events/catalogue.js"
import { CoreCollections } from "../../src/ports/collections.js"
import {
  type Collection,
  type CollectionSpec,
  type ColumnValues,
  type Condition,
  type IndexedRow,
  type IndexValue,
  type ListQuery,
  Storage,
  type StorageService,
  type StoredEvent
} from "../../src/ports/storage.js"
import { Tenant, type TenantId } from "../../src/ports/tenant.js"
import { type Checkpointer, startCheckpointer } from "./checkpointer.js"
import { makeLock } from "./lock.js"
import { migrateBase, migrateCollection, quote, type Run, tableOf } from "./migrations.js"

export interface SqliteStorageSettings {
  /**
   * How long a statement waits for another connection's lock before SQLITE_BUSY (5000 by
   * default). A `BEGIN IMMEDIATE` still busy after it is retried with a short backoff.
   */
  readonly busyTimeoutMs?: number
  /**
   * Checkpoint the WAL from a worker thread once the storage has committed 200 transactions
   * (default true; files only). See checkpointer.ts.
   */
  readonly checkpointInBackground?: boolean
}

/** Commits before a storage counts as busy enough for a checkpoint worker. */
const CHECKPOINTER_AFTER_COMMITS = 200
/** SQLite's own checkpoint, kept as a safety net behind the worker (~40 MB of WAL). */
const FALLBACK_CHECKPOINT_PAGES = 10_000

export interface SqliteStorageOptions extends SqliteStorageSettings {
  /** A file path, or ":memory:" for a private database that lives as long as the layer. */
  readonly filename: string
}

type Connection = Database.Database
type Statement = Database.Statement
/** A connection's prepared statement for a text (`raw`: rows as arrays of values). */
type Statements = (text: string, raw: boolean) => Statement

interface OpenTransaction {
  /** Run once the transaction has committed, after the lock is released. */
  readonly afterCommit: Array<Effect.Effect<void>>
}

/** The transaction this fiber has open, if any (forked fibers inherit it). */
const openTransaction = FiberRef.unsafeMake<OpenTransaction | undefined>(undefined)

const codeOf = (cause: unknown): string | undefined => {
  const code = (cause as { readonly code?: unknown } | undefined)?.code
  return typeof code === "string" ? code : undefined
}

const messageOf = (cause: unknown): string =>
  cause instanceof Error ? cause.message : String(cause)

const failure = (what: string, cause: unknown): StorageFailure =>
  cause instanceof StorageFailure ? cause : new StorageFailure({ detail: `${what}: ${messageOf(cause)}`, cause })

const isBusy = (failure: StorageFailure): boolean => {
  const code = codeOf(failure.cause)
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

/**
 * Prepared statements of one connection by text. Lists of `IN (?, ?, …)` make the texts
 * open-ended, so the cache starts over when it grows past what any real workload repeats.
 */
const statementCache = (db: Connection): Statements => {
  const cache = new Map<string, Statement>()
  return (text: string, raw: boolean): Statement => {
    const key = raw ? `r ${text}` : text
    let statement = cache.get(key)
    if (statement === undefined) {
      if (cache.size >= 500) cache.clear()
      statement = db.prepare(text)
      if (raw && statement.reader) statement.raw(true)
      cache.set(key, statement)
    }
    return statement
  }
}

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
      for (const v of values) params.push(v)
      const list = `${c} IN (${values.length === 1 ? "?" : values.map(() => "?").join(", ")})`
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

/**
 * `LIMIT n` as a literal, or nothing. A bound `LIMIT ?` measured 12-18 µs slower per run
 * (better-sqlite3 12, SQLite 3.50), which is most of a small lookup's cost.
 */
const limitSql = (limit: number | undefined): string =>
  limit === undefined ? "" : ` LIMIT ${Number.isFinite(limit) ? Math.max(0, Math.trunc(limit)) : -1}`

/**
 * The log's highest seq so far, erased events included (like the reference adapter's counter,
 * so a seq is never handed out twice); see migrations.ts.
 */
const LAST_SEQ = "max(COALESCE((SELECT max(seq) FROM events), 0), " +
  "COALESCE((SELECT value FROM slotwise_sequences WHERE name = 'events'), 0))"
const NEXT_SEQ = `(${LAST_SEQ} + 1)`
const APPEND_EVENT = `INSERT INTO events (seq, account_id, environment, id, type, doc) VALUES (${NEXT_SEQ}, ?, ?, ?, ?, ?)`
/** Before events are erased: their highest seq stays taken. */
const REMEMBER_LAST_SEQ = "INSERT INTO slotwise_sequences (name, value) " +
  "SELECT 'events', seq FROM events WHERE seq = (SELECT max(seq) FROM events) " +
  "ON CONFLICT (name) DO UPDATE SET value = max(value, excluded.value)"

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

/** `parse()`, with JSON that does not parse (a corrupt row) as a typed fault. */
const parsed = <A>(what: string, parse: () => A): A => {
  try {
    return parse()
  } catch (cause) {
    throw new StorageFailure({ detail: `${what}: corrupt JSON`, cause })
  }
}

/** JSON documents back from their rows. */
const parseAll = <A>(what: string, rows: ReadonlyArray<{ readonly doc: string }>): Array<A> =>
  parsed(what, () => rows.map((row) => JSON.parse(row.doc) as A))

const open = (filename: string, busyTimeoutMs: number, what: string): Effect.Effect<Connection, StorageFailure, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.try({
      try: () => new Database(filename, { timeout: busyTimeoutMs }),
      catch: (cause) => new StorageFailure({ detail: `cannot open SQLite database ${filename} (${what}): ${messageOf(cause)}`, cause })
    }),
    (db) => Effect.sync(() => db.close())
  )

/** A private database that a second connection could not share. */
const isPrivate = (filename: string): boolean =>
  filename === "" || filename === ":memory:" || /^file:.*mode=memory/.test(filename)

/**
 * The storage service on `options.filename`: opens the connections, sets their pragmas,
 * migrates the event log and the core's collections, and prepares any other collection on
 * first use. The connections close with the scope.
 */
export const makeSqliteStorage = (
  options: SqliteStorageOptions
): Effect.Effect<StorageService, StorageFailure, Scope.Scope> =>
  Effect.gen(function*() {
    const busyTimeoutMs = Math.max(0, Math.trunc(options.busyTimeoutMs ?? 5000))
    const writer = yield* open(options.filename, busyTimeoutMs, "writer")
    const writerStatement = statementCache(writer)
    const lock = makeLock()
    const backgroundCheckpoints = options.checkpointInBackground !== false && !isPrivate(options.filename)
    let commits = 0
    let checkpointer: Checkpointer | undefined

    const pragmas = (db: Connection) =>
      Effect.try({
        try: () => {
          db.pragma("journal_mode = WAL")
          db.pragma("synchronous = NORMAL")
          db.pragma("foreign_keys = ON")
        },
        catch: (cause) => failure("set pragmas", cause)
      })
    yield* pragmas(writer)

    /** Runs one statement: rows for a reader, nothing for a writer. Throws StorageFailure. */
    const execute = (
      statements: Statements,
      text: string,
      params: ReadonlyArray<unknown>,
      what: string,
      raw = false
    ): Array<any> => {
      try {
        const statement = statements(text, raw)
        if (statement.reader) return statement.all(...params)
        statement.run(...params)
        return []
      } catch (cause) {
        throw failure(what, cause)
      }
    }

    const attempt = <A>(f: () => A): Effect.Effect<A, StorageFailure> => {
      try {
        return Effect.succeed(f())
      } catch (cause) {
        return Effect.fail(failure("sqlite", cause))
      }
    }

    // Filled in once the schema exists (a reader opened earlier could see no tables).
    let readerStatement: Statements | undefined

    /**
     * Runs `f` on the connection this fiber should use: the writer inside its transaction,
     * else the reader. With one connection, a read outside a transaction waits for the lock.
     */
    const onConnection = <A>(f: (statements: Statements, context: Context.Context<never>) => A) =>
      Effect.withFiberRuntime<A, StorageFailure>((fiber) => {
        const context = fiber.currentContext
        if (fiber.getFiberRef(openTransaction) !== undefined) return attempt(() => f(writerStatement, context))
        if (readerStatement !== undefined) return attempt(() => f(readerStatement!, context))
        return lock.withLock(Effect.suspend(() => attempt(() => f(writerStatement, context))))
      })

    /** Like `onConnection`, for the tenant in context: every tenant-facing statement. */
    const forTenant = <A>(f: (statements: Statements, tenant: TenantId) => A): Effect.Effect<A, StorageFailure, Tenant> =>
      onConnection((statements, context) => f(statements, Context.unsafeGet(context as Context.Context<Tenant>, Tenant)))

    /** Statements that span every tenant (start-up, dispatchers, authentication). */
    const acrossTenants = <A>(f: (statements: Statements) => A) => onConnection((statements) => f(statements))

    /** `BEGIN IMMEDIATE` now: undefined once begun, else why not. */
    const beginNow = (): StorageFailure | undefined => {
      try {
        // A connection left inside a transaction (a ROLLBACK that failed) is ended first.
        if (writer.inTransaction) writer.exec("ROLLBACK")
        execute(writerStatement, "BEGIN IMMEDIATE", [], "begin transaction")
        return undefined
      } catch (error) {
        return failure("begin transaction", error)
      }
    }

    /** Begins, retrying while the database stays busy (built only then: it costs ~25 µs). */
    const begin = Effect.suspend(() => {
      const refused = beginNow()
      if (refused === undefined) return Effect.void
      if (!isBusy(refused)) return Effect.fail(refused)
      return Effect.suspend(() => {
        const again = beginNow()
        return again === undefined ? Effect.void : Effect.fail(again)
      }).pipe(Effect.retry({ schedule: busyRetry, while: isBusy }), Effect.withClock(liveClock))
    })

    const rollback = Effect.suspend(() => {
      // SQLite has already rolled back after some errors (SQLITE_FULL, SQLITE_IOERR).
      if (!writer.inTransaction) return Effect.void
      try {
        writer.exec("ROLLBACK")
        return Effect.void
      } catch (cause) {
        return Effect.logError("slotwise sqlite: rollback failed", cause)
      }
    })

    /** Commits (or rolls back) after the transaction's effect ended with `exit`. */
    const finish = <A, E>(exit: Exit.Exit<A, E>): Effect.Effect<A, E | StorageFailure> => {
      if (exit._tag === "Failure") return Effect.zipRight(rollback, exit)
      try {
        execute(writerStatement, "COMMIT", [], "commit")
      } catch (error) {
        return Effect.zipRight(rollback, Effect.fail(failure("commit", error)))
      }
      if (++commits === CHECKPOINTER_AFTER_COMMITS && backgroundCheckpoints) {
        checkpointer = startCheckpointer({ filename: options.filename })
        if (checkpointer !== undefined) writer.pragma(`wal_autocheckpoint = ${FALLBACK_CHECKPOINT_PAGES}`)
      }
      return exit
    }

    const runAfterCommit = (state: OpenTransaction): Effect.Effect<void> =>
      state.afterCommit.length <= 1
        ? state.afterCommit[0] ?? Effect.void
        : Effect.forEach(state.afterCommit, (effect) => effect, { discard: true })

    const transaction = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E | StorageFailure, R> =>
      Effect.withFiberRuntime<A, E | StorageFailure, R>((fiber) => {
        if (fiber.getFiberRef(openTransaction) !== undefined) return effect
        const state: OpenTransaction = { afterCommit: [] }
        // One uninterruptible region: the lock is released on every path out of it (begin,
        // the effect, commit and rollback all end in an Exit, never a throw), and the fiber's
        // transaction is set and cleared by hand (`Effect.locally` costs ~8 µs).
        const committed = Effect.uninterruptibleMask((restore) =>
          Effect.zipRight(
            lock.acquire(restore),
            Effect.flatMap(
              Effect.exit(Effect.flatMap(begin, () =>
                Effect.zipRight(
                  FiberRef.set(openTransaction, state),
                  Effect.flatMap(Effect.exit(restore(effect)), (exit) =>
                    Effect.zipRight(FiberRef.set(openTransaction, undefined), finish(exit)))
                ))),
              (exit) => {
                lock.release()
                return exit
              }
            )
          )
        )
        return Effect.tap(committed, () => runAfterCommit(state))
      })

    const afterCommit = (effect: Effect.Effect<void>): Effect.Effect<void> =>
      Effect.withFiberRuntime((fiber) => {
        const open = fiber.getFiberRef(openTransaction)
        if (open === undefined) return effect
        open.afterCommit.push(effect)
        return Effect.void
      })

    /** A write of one collection or the log: in the open transaction, or in one of its own. */
    const write = <A>(f: (statements: Statements, tenant: TenantId) => A): Effect.Effect<A, StorageFailure, Tenant> =>
      Effect.withFiberRuntime((fiber) =>
        fiber.getFiberRef(openTransaction) !== undefined
          ? attempt(() => f(writerStatement, Context.unsafeGet(fiber.currentContext as Context.Context<Tenant>, Tenant)))
          : transaction(forTenant(f))
      ) as Effect.Effect<A, StorageFailure, Tenant>

    /** Migration steps run on the writer inside the start-up (or first-use) transaction. */
    const run: Run = (text, params, what) => acrossTenants((statements) => execute(statements, text, params, what))

    /** Specs whose table this process has migrated (committed). */
    const ready = new WeakSet<CollectionSpec<any>>()
    const markReady = (spec: CollectionSpec<any>) => afterCommit(Effect.sync(() => ready.add(spec)))

    yield* transaction(Effect.gen(function*() {
      yield* migrateBase(run)
      for (const spec of CoreCollections) {
        yield* migrateCollection(run, spec)
        yield* markReady(spec)
      }
    }))

    // Stopped before the connections close (finalizers run in reverse).
    yield* Effect.addFinalizer(() => Effect.suspend(() => checkpointer?.stop ?? Effect.void))

    if (!isPrivate(options.filename)) {
      const reader = yield* open(options.filename, busyTimeoutMs, "reader")
      yield* Effect.try({
        try: () => reader.pragma("query_only = ON"),
        catch: (cause) => failure("set reader pragmas", cause)
      })
      readerStatement = statementCache(reader)
    }

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
      const names = ["id", ...columns]
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

      /** Fails with a typed fault unless every column is `id` or an index column. */
      const requireKnown = (columns: Iterable<string>): void => {
        for (const column of columns) {
          if (!known.has(column)) throw new StorageFailure({ detail: `${name}: no index column ${column}` })
        }
      }

      /** `WHERE …` for a query, its parameters pushed onto `params`; unknown columns fail. */
      const whereOf = (query: ListQuery, tenant: TenantId | undefined, params: Array<unknown>): string => {
        const parts: Array<string> = []
        if (tenant !== undefined) {
          parts.push("account_id = ?", "environment = ?")
          params.push(tenant.account_id, tenant.environment)
        }
        for (const condition of query.where ?? []) {
          requireKnown([condition.column])
          parts.push(conditionSql(condition.column, condition, params))
        }
        if (query.after !== undefined) parts.push(afterSql(keys, query.after, params))
        return parts.length === 0 ? "" : `WHERE ${parts.join(" AND ")}`
      }

      /** Rows of values for `selected`, as objects keyed by column. */
      const rowOf = (selected: ReadonlyArray<string>) => (values: ReadonlyArray<unknown>): IndexedRow => {
        const row: Record<string, unknown> = {}
        for (let i = 0; i < selected.length; i++) row[selected[i]!] = values[i]
        return row as unknown as IndexedRow
      }

      /** `effect`, after preparing the table if this process has not yet. */
      const withTable = <X, E, R>(effect: Effect.Effect<X, E, R>) =>
        ready.has(spec) ? effect : Effect.zipRight(ensure(spec), effect)

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
        list: (query) =>
          withTable(forTenant((statements, tenant) => {
            const params: Array<unknown> = []
            const clause = whereOf(query, tenant, params)
            return parseAll<A>(
              what.list,
              execute(statements, `SELECT doc FROM ${table} ${clause} ${orderBy}${limitSql(query.limit)}`, params, what.list)
            )
          })),
        listIndexes: (query) =>
          withTable(forTenant((statements, tenant) => {
            const wanted = query.columns
            if (wanted !== undefined) requireKnown(wanted)
            const selected = wanted === undefined
              ? names
              : ["id", ...wanted.filter((c) => c !== "id")]
            const params: Array<unknown> = []
            const clause = whereOf(query, tenant, params)
            const text = `SELECT ${selected.map(quote).join(", ")} FROM ${table} ${clause} ` +
              `${query.ordered === false ? "" : orderBy}${limitSql(query.limit)}`
            // Rows as arrays, made into objects here: cheaper for the thousands a slot list reads.
            return execute(statements, text, params, what.listIndexes, true).map(rowOf(selected))
          })),
        listColumns: ({ columns, groupBy, where = [] }) =>
          withTable(forTenant((statements, tenant) => {
            requireKnown([groupBy, ...columns])
            const params: Array<unknown> = []
            const clause = whereOf({ where }, tenant, params)
            // A row per group, each column aggregated into a JSON array: parsing a few long
            // arrays costs half of what making thousands of rows does.
            const selected = [quote(groupBy), ...columns.map((c) => `json_group_array(${quote(c)})`)]
            const text = `SELECT ${selected.join(", ")} FROM ${table} ${clause} GROUP BY ${quote(groupBy)}`
            const rows = execute(statements, text, params, what.listColumns, true) as Array<[IndexValue, ...Array<string>]>
            return parsed(what.listColumns, () =>
              new Map<IndexValue, ColumnValues>(
                rows.map(([key, ...arrays]) => [key, arrays.map((json) => JSON.parse(json) as Array<IndexValue>)])
              ))
          })),
        listAcrossTenants: (query) =>
          withTable(acrossTenants((statements) => {
            const params: Array<unknown> = []
            const clause = whereOf(query, undefined, params)
            const rows = execute(
              statements,
              `SELECT account_id, environment, doc FROM ${table} ${clause} ${orderBy}, account_id, environment${limitSql(query.limit)}`,
              params,
              what.listAcrossTenants
            ) as Array<{ readonly account_id: string; readonly environment: TenantId["environment"]; readonly doc: string }>
            const docs = parseAll<A>(what.listAcrossTenants, rows)
            return docs.map((doc, i) => ({
              tenant: { account_id: rows[i]!.account_id, environment: rows[i]!.environment },
              doc
            }))
          }))
      }
    }

    const collection = <A extends { readonly id: string }>(spec: CollectionSpec<A>): Collection<A> => {
      let found = collections.get(spec) as Collection<A> | undefined
      if (found === undefined) collections.set(spec, found = makeCollection(spec))
      return found
    }

    const parseEvents = (rows: ReadonlyArray<EventRow>, tenant?: TenantId): Array<StoredEvent> =>
      parsed("events", () => rows.map((row) => storedEvent(row, tenant)))

    const events: StorageService["events"] = {
      append: (event) =>
        write((statements, tenant) => {
          execute(
            statements,
            APPEND_EVENT,
            [tenant.account_id, tenant.environment, event.id, event.type, JSON.stringify(event)],
            "events: append"
          )
        }),
      get: (id) =>
        forTenant((statements, tenant) => {
          const rows = execute(
            statements,
            "SELECT seq, account_id, environment, doc FROM events WHERE id = ? AND account_id = ? AND environment = ?",
            [id, tenant.account_id, tenant.environment],
            "events: get"
          )
          return Option.map(Option.fromNullable(parseEvents(rows, tenant)[0]), (stored) => stored.event)
        }),
      read: ({ after, limit, types }) =>
        forTenant((statements, tenant) => {
          const params: Array<unknown> = [tenant.account_id, tenant.environment, after]
          let filter = ""
          if (types !== undefined) {
            filter = types.length === 0 ? " AND 0" : ` AND type IN (${types.map(() => "?").join(", ")})`
            params.push(...types)
          }
          const rows = execute(
            statements,
            "SELECT seq, account_id, environment, doc FROM events " +
              `WHERE account_id = ? AND environment = ? AND seq > ?${filter} ORDER BY seq${limitSql(limit)}`,
            params,
            "events: read"
          )
          return parseEvents(rows, tenant)
        }),
      lastSeq: acrossTenants((statements) =>
        Number(
          execute(statements, `SELECT ${LAST_SEQ} AS seq`, [], "events: lastSeq")[0]?.seq ?? 0
        )
      ),
      readAcrossTenants: ({ after, limit }) =>
        acrossTenants((statements) =>
          parseEvents(
            execute(
              statements,
              `SELECT seq, account_id, environment, doc FROM events WHERE seq > ? ORDER BY seq${limitSql(limit)}`,
              [after],
              "events: readAcrossTenants"
            )
          )
        )
    }

    const eraseTenant = write((statements, tenant) => {
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
      execute(statements, REMEMBER_LAST_SEQ, [], "eraseTenant: keep the events high-water mark")
      execute(
        statements,
        "DELETE FROM events WHERE account_id = ? AND environment = ?",
        [tenant.account_id, tenant.environment],
        "eraseTenant: events"
      )
    })

    return { collection, events, transaction, afterCommit, eraseTenant } satisfies StorageService
  })

/** Storage on `filename` (connections closed with the layer). */
export const SqliteStorageLive = (options: SqliteStorageOptions): Layer.Layer<Storage, StorageFailure> =>
  Layer.scoped(Storage, makeSqliteStorage(options))
