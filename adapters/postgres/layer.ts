/**
 * PostgreSQL storage over `pg` (node-postgres). See transactions.ts for the write lock,
 * eventLog.ts for how the log keeps seq order equal to commit order, migrations.ts for the
 * schema, and docs/postgres.md for why the driver is `pg` itself and the figures.
 *
 * At start the layer migrates the event log and the core's collections in one transaction
 * under a database-wide advisory lock, so instances starting together migrate once; other
 * collections are prepared the same way on first use. A server that refuses connections at
 * start (still starting, at its connection limit) is tried again for a while. The pool
 * closes with the layer.
 */
import { Effect, Layer, type Scope } from "effect"
import pg from "pg"
import { StorageFailure } from "../../src/domain/errors.js"
import { CoreCollections } from "../../src/ports/collections.js"
import {
  type Collection,
  type CollectionRead,
  type CollectionSpec,
  type EventLog,
  type ReadResults,
  Storage,
  type StorageService
} from "../../src/ports/storage.js"
import type { Tenant } from "../../src/ports/tenant.js"
import { type CollectionReads, type ComposedRead, makeCollection } from "./collections.js"
import { makeEventLog } from "./eventLog.js"
import { migrateBase, migrateCollection, type Run } from "./migrations.js"
import { quote } from "./query.js"
import { makeSignals } from "./signals.js"
import { failure, makeSql } from "./transactions.js"

export interface PostgresStorageOptions {
  /** A connection string: `postgres://user@host:5432/database`. */
  readonly url: string
  /** The schema to keep the tables in, created if missing (default: the connection's). */
  readonly schema?: string
  /** Connections in the pool (default 10); a write transaction holds one to its end. */
  readonly maxConnections?: number
  /**
   * How long start-up keeps trying a server that refuses connections (still starting, at its
   * connection limit, restarting) before it fails (default 30,000 ms).
   */
  readonly startTimeoutMs?: number
  /**
   * Where start-up says what it is doing, a line at a time: that it cannot connect (at once,
   * then every few seconds while it keeps trying) and that it migrates. Default: warnings on
   * Effect's logger for the retries, nothing else.
   */
  readonly log?: (line: string) => void
}

/** `host:port` of a connection string, for messages (never its user or password). */
export const serverOf = (url: string): string => {
  if (!URL.canParse(url)) return "the server in the URL"
  const { hostname, port } = new URL(url)
  return `${hostname === "" ? "localhost" : hostname}:${port === "" ? "5432" : port}`
}

/** A pause on a plain timer: a TestClock in context must not stall start-up. */
const pause = (ms: number) =>
  Effect.async<void>((resume) => {
    const timer = setTimeout(() => resume(Effect.void), ms)
    return Effect.sync(() => clearTimeout(timer))
  })

/**
 * `effect`, tried again while the server is out of reach, 100 ms apart growing to 2 s, until
 * `ms` have passed; a server that answers with any other failure fails at once. The first
 * refusal is reported at once, then one line every 5 s or so while it keeps trying.
 */
const whileUnreachable = <A>(
  effect: Effect.Effect<A, StorageFailure>,
  ms: number,
  where: string,
  log: ((line: string) => void) | undefined
): Effect.Effect<A, StorageFailure> =>
  Effect.suspend(() => {
    const started = Date.now()
    const deadline = started + ms
    let delay = 100
    let reported: number | undefined
    const report = (error: StorageFailure) =>
      Effect.suspend(() => {
        const now = Date.now()
        if (log === undefined)
          return Effect.logWarning(`slotwise postgres: not reachable at start (${error.detail}); trying again in ${delay} ms`)
        if (reported !== undefined && now - reported < 5_000)
          return Effect.void
        const first = reported === undefined
        reported = now
        const left = Math.max(0, Math.ceil((deadline - now) / 1000))
        return Effect.sync(() =>
          log(
            first
              ? `cannot connect to PostgreSQL at ${where} (${error.detail}); trying again for up to ${Math.ceil(ms / 1000)} s`
              : `still cannot connect to PostgreSQL at ${where} (${error.detail}); ${left} s left`
          )
        )
      })
    const attempt: Effect.Effect<A, StorageFailure> = Effect.catchIf(
      effect,
      (error) => error.unavailable === true && Date.now() + delay < deadline,
      (error) =>
        report(error).pipe(
          Effect.zipRight(pause(delay)),
          Effect.zipRight(Effect.suspend(() => {
            delay = Math.min(delay * 2, 2_000)
            return attempt
          }))
        )
    )
    return Effect.catchIf(
      attempt,
      (error) => error.unavailable === true,
      (error) =>
        Effect.fail(
          new StorageFailure({
            detail: `cannot connect to PostgreSQL at ${where}${
              reported === undefined ? "" : ` after ${Math.round((Date.now() - started) / 1000)} s`
            }: ${error.detail}`,
            cause: error.cause,
            unavailable: true
          })
        )
    )
  })

/** The advisory lock key that serialises migrations across instances. */
const MIGRATION_LOCK = "slotwise:migrations"

const INT8 = 20
/** bigint columns as numbers: index values and seqs are epoch milliseconds and counters. */
const types = {
  getTypeParser:
    ((oid: number, format?: "text" | "binary") =>
      oid === INT8 ? (value: string) => Number(value) : pg.types.getTypeParser(oid, format as "text")) as typeof pg.types.getTypeParser
}

/** A pool on `options`' database with `max` connections (closed with the scope). */
const pooled = (options: PostgresStorageOptions, max: number) =>
  Effect.acquireRelease(
    Effect.try({
      try: () => {
        const pool = new pg.Pool({
          connectionString: options.url,
          max,
          types,
          // A process that stalls inside a transaction would hold its tenant's write lock;
          // the server ends such a session after a minute idle, releasing the lock.
          idle_in_transaction_session_timeout: 60_000,
          ...(options.schema === undefined ? {} : { options: `-c search_path=${options.schema}` })
        })
        // A connection that breaks (a restart, a failover, pg_terminate_backend, a pooler's
        // idle timeout) emits 'error' on its client; without a listener that ends the process.
        // The pool listens only while a connection is idle, so every connection gets a
        // listener of its own for its whole life, checked out or not. The statement in
        // flight fails by itself (a 503 to its request), and the pool drops the connection
        // when it is released broken or found broken idle.
        pool.on("connect", (client) => {
          client.on("error", (error) => Effect.runFork(Effect.logWarning(`slotwise postgres: connection lost: ${error.message}`)))
        })
        // The pool re-emits an idle connection's error; the listener above has logged it.
        pool.on("error", () => {})
        return pool
      },
      catch: (cause) => failure("cannot create the PostgreSQL pool", cause)
    }),
    (pool) => Effect.promise(() => pool.end())
  )

export const makePostgresStorage = (
  options: PostgresStorageOptions
): Effect.Effect<StorageService, StorageFailure, Scope.Scope> =>
  Effect.gen(function*() {
    const schema = options.schema
    if (schema !== undefined && !/^[A-Za-z_][A-Za-z0-9_]{0,62}$/.test(schema)) {
      return yield* Effect.fail(new StorageFailure({ detail: `schema ${JSON.stringify(schema)} is not an identifier` }))
    }
    const connections = options.maxConnections ?? 10
    const pool = yield* pooled(options, connections)
    // Collections first used after start are prepared on a connection of their own, in their
    // own transaction: a booking's transaction holding its members' locks must never wait for
    // the migration lock while another holds that lock and waits for a member's.
    const aside = makeSql(yield* pooled(options, 1))
    const sql = makeSql(pool)
    const run: Run = (text, params, what) => sql.query(text, params, what)
    const asideRun: Run = (text, params, what) => aside.query(text, params, what)

    /** Specs whose table this process has migrated (committed). */
    const ready = new WeakSet<CollectionSpec<any>>()
    const markReady = (spec: CollectionSpec<any>) => sql.afterCommit(Effect.sync(() => ready.add(spec)))

    // Instances often start beside their database (a compose file, a failover): wait for it.
    const where = serverOf(options.url)
    let began = 0
    yield* whileUnreachable(
      sql.locked(
        MIGRATION_LOCK,
        Effect.gen(function*() {
          began = Date.now()
          options.log?.(`PostgreSQL ${where}: migrating tables …`)
          yield* migrateBase(run, schema)
          for (const spec of CoreCollections) {
            yield* migrateCollection(run, spec)
            yield* markReady(spec)
          }
        })
      ),
      options.startTimeoutMs ?? 30_000,
      where,
      options.log
    )
    options.log?.(`PostgreSQL ${where}: tables migrated, done (${Date.now() - began} ms)`)

    const ensure = (spec: CollectionSpec<any>): Effect.Effect<void, StorageFailure> =>
      Effect.suspend(() =>
        ready.has(spec)
          ? Effect.void
          : aside.outside(aside.locked(MIGRATION_LOCK, Effect.zipRight(migrateCollection(asideRun, spec), markReady(spec))))
      )

    const collections = new WeakMap<CollectionSpec<any>, ReturnType<typeof makeCollection<any>>>()
    const collection = <A extends { readonly id: string }>(
      spec: CollectionSpec<A>
    ): Collection<A> & { readonly reads: CollectionReads } => {
      let found = collections.get(spec)
      if (found === undefined) collections.set(spec, found = makeCollection(sql, spec, ensure(spec)))
      return found
    }

    /**
     * The reads in one statement, one round trip: each a scalar subquery of one `json` value
     * (its rows aggregated), their parameters numbered on from one to the next.
     */
    const readMany = <const T extends ReadonlyArray<CollectionRead<any>>>(
      reads: T
    ): Effect.Effect<ReadResults<T>, StorageFailure, Tenant> =>
      reads.length === 0 ? Effect.succeed([] as unknown as ReadResults<T>) : Effect.zipRight(
        Effect.forEach(reads, (read) => ensure(read.spec), { discard: true }),
        sql.forTenant((tenant) => {
          const params: Array<unknown> = []
          let composed: Array<ComposedRead>
          try {
            composed = reads.map((read) => collection(read.spec).reads[read.op](tenant, read.query as any, params))
          } catch (fault) {
            return Effect.fail(fault instanceof StorageFailure ? fault : new StorageFailure({ detail: "readMany: query", cause: fault }))
          }
          const text = `SELECT ${composed.map((read) => read.text).join(", ")}`
          return Effect.map(
            sql.query<Array<unknown>>(text, params, "readMany", { rows: "arrays" }),
            (rows) => composed.map((read, i) => read.answer(rows[0]![i])) as ReadResults<T>
          )
        })
      )

    const eraseTenant = sql.write((tenant) =>
      Effect.gen(function*() {
        const tables = yield* sql.query<{ name: string }>(
          "SELECT tablename AS name FROM pg_tables WHERE schemaname = current_schema() AND tablename LIKE 'c\\_%'",
          [],
          "eraseTenant: list tables"
        )
        for (const { name } of tables) {
          yield* sql.query(
            `DELETE FROM ${quote(name)} WHERE account_id = $1 AND environment = $2`,
            [tenant.account_id, tenant.environment],
            `eraseTenant: ${name}`
          )
        }
        // The counter stays: erased seqs are never handed out again.
        yield* sql.query(
          "DELETE FROM events WHERE account_id = $1 AND environment = $2",
          [tenant.account_id, tenant.environment],
          "eraseTenant: events"
        )
      })
    )

    // Other instances hear of every commit that appended events (signals.ts).
    const signals = yield* makeSignals({ url: options.url, schema, pool, afterCommit: sql.afterCommit })
    const log = makeEventLog(sql)
    const events: EventLog = { ...log, append: (event) => Effect.zipRight(log.append(event), signals.publish("events")) }

    return {
      collection,
      readMany,
      events,
      transaction: sql.transaction,
      keyedTransaction: sql.keyedTransaction,
      lockKeys: sql.lockKeys,
      leaseTransaction: sql.leaseTransaction,
      afterCommit: sql.afterCommit,
      eraseTenant,
      signals,
      // Outside a transaction each read takes a pooled connection of its own; inside one they
      // would queue on the transaction's connection anyway.
      readConcurrency: Effect.map(sql.inTransaction, (open) => (open ? 1 : connections))
    } satisfies StorageService
  })

/** Storage on the PostgreSQL database at `options.url` (pool closed with the layer). */
export const PostgresStorageLive = (options: PostgresStorageOptions): Layer.Layer<Storage, StorageFailure> =>
  Layer.scoped(Storage, makePostgresStorage(options))
