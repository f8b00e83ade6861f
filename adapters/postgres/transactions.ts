/**
 * Statements and transactions on a `pg` pool.
 *
 * Statements. Each runs as a named prepared statement (parsed and planned once per
 * connection), but for those planned each time they run (`plan: "each"`: a page by a filter);
 * outside a transaction on any pooled connection, inside one on the transaction's own
 * connection, so a transaction reads its own writes and nobody else's uncommitted ones
 * (READ COMMITTED).
 *
 * Transactions. `BEGIN` and the write lock go in one round trip: every transaction takes a
 * transaction-scoped advisory lock for its tenant (`pg_advisory_xact_lock` on a hash of
 * the tenant), plus a shared lock on one global key; a transaction begun without a tenant
 * takes that global key exclusively. Two write transactions of one tenant (in this process
 * or any other on the database) therefore never interleave: the core's check-then-write
 * (overlap check, then insert) is atomic, which is what `BEGIN IMMEDIATE` gives on SQLite,
 * while other tenants' transactions proceed in parallel. A statement for another tenant
 * inside the transaction takes that tenant's lock first. The locks end with the
 * transaction. The open transaction is a fiber-local value; nested calls join it.
 *
 * Keyed transactions (bookings, holds, idempotency claims) take their tenant's lock shared
 * instead, and then the locks of the keys they name (`lockKeys`: a tenant's staff member, a
 * publishable key's visitor, an idempotency key), exclusively, in one sorted batch. Two of
 * them wait for each other only when they name a common key; every plain transaction of the
 * tenant (which changes services, staff, hours, anything a check reads) still excludes them
 * all. The event counter (eventLog.ts) is the one row every write touches: its lock is taken
 * by the last statement before COMMIT and held only through it.
 */
import { Context, Effect, type Exit, FiberRef, Option } from "effect"
import pg from "pg"
import { StorageFailure } from "../../src/domain/errors.js"
import { type AfterCommitQueue, afterCommitOn, runAfterCommit } from "../../src/ports/afterCommit.js"
import { currentIdempotentWrites, idempotentTransaction } from "../../src/ports/storage.js"
import { Tenant, type TenantId } from "../../src/ports/tenant.js"

type Queryable = pg.Pool | pg.PoolClient

interface OpenTransaction extends AfterCommitQueue {
  readonly client: pg.PoolClient
  /** Tenants whose lock this transaction holds (all of them when `global`). */
  readonly locked: Set<string>
  readonly global: boolean
  /** Holding its tenant's lock shared: writes are excluded only by the keys it locks. */
  readonly keyed: boolean
  /** Run once the transaction has committed, after its connection is back in the pool. */
  readonly afterCommit: Array<Effect.Effect<void>>
}

/** The transaction this fiber has open, if any (forked fibers inherit it). */
const openTransaction = FiberRef.unsafeMake<OpenTransaction | undefined>(undefined)

/** The key of the global write lock (tenant keys are 64-bit text hashes; a clash only serialises). */
const GLOBAL_LOCK = "7305358101040177153"

export const codeOf = (cause: unknown): string | undefined => {
  const code = (cause as { readonly code?: unknown } | undefined)?.code
  return typeof code === "string" ? code : undefined
}

const messageOf = (cause: unknown): string => (cause instanceof Error ? cause.message : String(cause))

/**
 * SQLSTATEs of a server that is out of reach for now: class 08 (connection exception),
 * 57P01–57P03 (terminated by an administrator or a failover, crash shutdown, starting up),
 * 53300 (too many connections).
 */
const UNAVAILABLE_STATE = /^(08...|57P0[123]|53300)$/
/** Socket errors of a server that is down, restarting or unreachable. */
const UNAVAILABLE_SOCKET = new Set(["ECONNREFUSED", "ECONNRESET", "EPIPE", "ETIMEDOUT", "EHOSTUNREACH", "ENETUNREACH", "EAI_AGAIN"])
/** node-postgres's own errors for a connection that broke, or could not be made in time. */
const UNAVAILABLE_MESSAGE = /^(Connection terminated|Client has encountered a connection error|timeout exceeded when trying to connect)/

/** Whether `cause` means the database could not be reached, rather than that a statement was wrong. */
export const isConnectionLoss = (cause: unknown): boolean => {
  const code = codeOf(cause)
  if (code !== undefined && (UNAVAILABLE_STATE.test(code) || UNAVAILABLE_SOCKET.has(code))) return true
  return cause instanceof Error && UNAVAILABLE_MESSAGE.test(cause.message)
}

export const failure = (what: string, cause: unknown): StorageFailure =>
  cause instanceof StorageFailure
    ? cause
    : new StorageFailure({
      detail: `${what}: ${messageOf(cause)}`,
      cause,
      ...(isConnectionLoss(cause) ? { unavailable: true } : {})
    })

const tenantKey = (tenant: TenantId): string => `${tenant.account_id}/${tenant.environment}`

/** The transaction's lock on a text key, exclusive or shared (a 64-bit hash of it: a clash only serialises). */
const advisoryLock = (key: string, shared = false): string =>
  `pg_advisory_xact_lock${shared ? "_shared" : ""}(hashtextextended(${pg.escapeLiteral(key)}, 0))`

/** `SELECT` of the lock for one tenant's key. */
const tenantLock = (tenant: TenantId): string => advisoryLock(tenantKey(tenant))

/** The same lock, shared: keyed transactions of the tenant hold it together. */
const tenantSharedLock = (tenant: TenantId): string => advisoryLock(tenantKey(tenant), true)

export interface QueryOptions {
  /** Rows as objects (default), or as arrays of values in the order selected. */
  readonly rows?: "objects" | "arrays"
  /**
   * `"prepared"` (default): a named prepared statement, which PostgreSQL plans for any values
   * once it has run a few times (a generic plan). `"each"`: unnamed, planned for the values
   * given, each time. A page of a list filters by one staff member, service, client or status:
   * a generic plan cannot tell a value with 21 rows from one with a million (it may walk the
   * date index past every other row, ~390 ms a page beside 1M bookings), a plan for the
   * value can; planning costs less than a millisecond.
   */
  readonly plan?: "prepared" | "each"
}

export interface Sql {
  /** Runs one statement on the fiber's connection. */
  readonly query: <R = any>(
    text: string,
    params: ReadonlyArray<unknown>,
    what: string,
    options?: QueryOptions
  ) => Effect.Effect<Array<R>, StorageFailure>
  /** Like `query`, after the lock of the tenant in context when inside a transaction. */
  readonly forTenant: <A>(
    f: (tenant: TenantId) => Effect.Effect<A, StorageFailure>
  ) => Effect.Effect<A, StorageFailure, Tenant>
  /** A write: in the open transaction, or in one of its own. */
  readonly write: <A>(
    f: (tenant: TenantId) => Effect.Effect<A, StorageFailure>
  ) => Effect.Effect<A, StorageFailure, Tenant>
  readonly transaction: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E | StorageFailure, R>
  /** A transaction under its tenant's shared lock and the keys it locks: see `lockKeys`. */
  readonly keyedTransaction: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E | StorageFailure, R>
  /** In a keyed transaction, the tenant's exclusive locks on `keys`, sorted, in one round trip. */
  readonly lockKeys: (keys: ReadonlyArray<string>) => Effect.Effect<void, StorageFailure, Tenant>
  /** A transaction for leases: see `begin`. */
  readonly leaseTransaction: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E | StorageFailure, R>
  readonly afterCommit: (effect: Effect.Effect<void>) => Effect.Effect<void>
  /**
   * Runs `f` under `pg_advisory_xact_lock` on `key`: inside the open transaction when there
   * is one (a pooled connection more could be one too many), else in one of its own.
   */
  readonly locked: <A>(key: string, f: Effect.Effect<A, StorageFailure>) => Effect.Effect<A, StorageFailure>
  /** Whether this fiber has a transaction open (its statements then share one connection). */
  readonly inTransaction: Effect.Effect<boolean>
  /** Runs `effect` as if no transaction were open: its statements go to this pool's connections. */
  readonly outside: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
}

export const makeSql = (pool: pg.Pool): Sql => {
  /** Prepared statement names by text; bounded, past which texts run unnamed. */
  const names = new Map<string, string>()
  const nameOf = (text: string): string | undefined => {
    let name = names.get(text)
    if (name === undefined && names.size < 1000) names.set(text, name = `sw${names.size}`)
    return name
  }

  const run = <R>(
    on: Queryable,
    text: string,
    params: ReadonlyArray<unknown>,
    what: string,
    options: QueryOptions = {}
  ): Effect.Effect<Array<R>, StorageFailure> =>
    Effect.async<Array<R>, StorageFailure>((resume) => {
      const config: pg.QueryConfig = { text, values: params as Array<unknown> }
      const name = options.plan === "each" ? undefined : nameOf(text)
      if (name !== undefined) config.name = name
      ;(options.rows === "arrays" ? on.query({ ...config, rowMode: "array" } as pg.QueryArrayConfig) : on.query(config)).then(
        (result) => resume(Effect.succeed(result.rows as Array<R>)),
        (cause) => resume(Effect.fail(failure(what, cause)))
      )
    })

  /** A multi-statement text over the simple protocol (no parameters): BEGIN and its locks. */
  const simple = (on: pg.PoolClient, text: string, what: string) =>
    Effect.tryPromise({ try: () => on.query(text), catch: (cause) => failure(what, cause) })

  /** Takes `tenant`'s lock in the open transaction, once: its statements come next. */
  const lockTenant = (open: OpenTransaction, tenant: TenantId) => {
    open.locked.add(tenantKey(tenant))
    return simple(open.client, `SELECT ${tenantLock(tenant)}`, "lock tenant")
  }

  const query = <R = any>(text: string, params: ReadonlyArray<unknown>, what: string, options?: QueryOptions) =>
    Effect.withFiberRuntime<Array<R>, StorageFailure>((fiber) =>
      run<R>(fiber.getFiberRef(openTransaction)?.client ?? pool, text, params, what, options)
    )

  const forTenant = <A>(f: (tenant: TenantId) => Effect.Effect<A, StorageFailure>) =>
    Effect.withFiberRuntime<A, StorageFailure, Tenant>((fiber) => {
      const tenant = Context.unsafeGet(fiber.currentContext as Context.Context<Tenant>, Tenant)
      const open = fiber.getFiberRef(openTransaction)
      if (open === undefined || open.global || open.locked.has(tenantKey(tenant))) return f(tenant)
      return Effect.zipRight(lockTenant(open, tenant), f(tenant))
    })

  const rollback = (client: pg.PoolClient) =>
    Effect.tryPromise({ try: () => client.query("ROLLBACK"), catch: (cause) => failure("rollback", cause) })

  /** Commits (or rolls back) after the effect ended with `exit`; the connection goes back. */
  const finish = <A, E>(open: OpenTransaction, exit: Exit.Exit<A, E>): Effect.Effect<A, E | StorageFailure> => {
    const release = (broken: unknown) => Effect.sync(() => open.client.release(broken as Error | undefined))
    if (exit._tag === "Failure") {
      return rollback(open.client).pipe(
        Effect.matchEffect({
          // On a lost connection the server has rolled back already; the connection is dropped.
          onFailure: (error) =>
            Effect.zipRight(
              release(error),
              error.unavailable === true ? Effect.void : Effect.logError("slotwise postgres: rollback failed", error)
            ),
          onSuccess: () => release(undefined)
        }),
        Effect.zipRight(exit)
      )
    }
    return run(open.client, "COMMIT", [], "commit").pipe(
      Effect.matchEffect({
        onFailure: (error) =>
          // A failed COMMIT has ended the transaction already; a broken connection is dropped.
          Effect.zipRight(Effect.ignore(rollback(open.client)), Effect.zipRight(release(error), Effect.fail(error))),
        onSuccess: () => Effect.zipRight(release(undefined), exit)
      })
    )
  }

  /** A pooled connection; one that arrives after the waiting fiber was interrupted goes back. */
  const connect = Effect.async<pg.PoolClient, StorageFailure>((resume) => {
    let wanted = true
    pool.connect().then(
      (client) => (wanted ? resume(Effect.succeed(client)) : client.release()),
      (cause) => resume(Effect.fail(failure("connect", cause)))
    )
    return Effect.sync(() => {
      wanted = false
    })
  })

  /**
   * `leasing`: the global key shared and no tenant's lock, so the transaction runs alongside
   * tenants' writes and other lessees; it writes only rows it locked (`FOR UPDATE SKIP
   * LOCKED`), and still waits for (and holds off) the transactions that take the global key.
   */
  const begin = <A, E, R>(effect: Effect.Effect<A, E, R>, mode: "plain" | "keyed" | "leasing"): Effect.Effect<A, E | StorageFailure, R> =>
    Effect.withFiberRuntime<A, E | StorageFailure, R>((fiber) => {
      if (fiber.getFiberRef(openTransaction) !== undefined) return effect
      const tenant = mode === "leasing"
        ? undefined
        : Option.getOrUndefined(Context.getOption(fiber.currentContext as Context.Context<Tenant>, Tenant))
      const keyed = mode === "keyed" && tenant !== undefined
      const opening = mode === "leasing"
        ? `BEGIN; SELECT pg_advisory_xact_lock_shared(${GLOBAL_LOCK})`
        : tenant === undefined
        ? `BEGIN; SELECT pg_advisory_xact_lock(${GLOBAL_LOCK})`
        : `BEGIN; SELECT pg_advisory_xact_lock_shared(${GLOBAL_LOCK}), ${keyed ? tenantSharedLock(tenant) : tenantLock(tenant)}`
      // One uninterruptible region: the connection goes back on every path out of it, and
      // the fiber's transaction is set and cleared by hand.
      const committed = Effect.uninterruptibleMask((restore) =>
        Effect.flatMap(restore(connect), (client) => {
          const open: OpenTransaction = {
            client,
            locked: new Set(tenant === undefined ? [] : [tenantKey(tenant)]),
            global: tenant === undefined,
            keyed,
            afterCommit: []
          }
          return Effect.flatMap(
            Effect.exit(simple(client, opening, "begin transaction")),
            (begun): Effect.Effect<readonly [A, OpenTransaction], E | StorageFailure, R> =>
              begun._tag === "Failure"
                ? finish(open, begun as Exit.Exit<never, StorageFailure>)
                : Effect.zipRight(
                  FiberRef.set(openTransaction, open),
                  Effect.flatMap(Effect.exit(restore(effect)), (exit) =>
                    Effect.zipRight(
                      FiberRef.set(openTransaction, undefined),
                      Effect.map(finish(open, exit), (a) => [a, open] as const)
                    ))
                )
          )
        })
      )
      return Effect.flatMap(committed, ([a, open]) => Effect.as(runAfterCommit(open), a))
    })

  /** A write transaction of the request in progress (leases are the workers'). */
  const requestWrite = (mode: "plain" | "keyed") => <A, E, R>(effect: Effect.Effect<A, E, R>) =>
    Effect.withFiberRuntime<A, E | StorageFailure, R>((fiber) =>
      fiber.getFiberRef(openTransaction) !== undefined
        ? effect
        : idempotentTransaction(fiber.getFiberRef(currentIdempotentWrites), effect, (effect) => begin(effect, mode))
    )
  const transaction = requestWrite("plain")
  const keyedTransaction = requestWrite("keyed")
  const leaseTransaction = <A, E, R>(effect: Effect.Effect<A, E, R>) => begin(effect, "leasing")

  const lockKeys = (keys: ReadonlyArray<string>) =>
    Effect.withFiberRuntime<void, StorageFailure, Tenant>((fiber) => {
      const open = fiber.getFiberRef(openTransaction)
      // Outside a keyed transaction there is nothing finer to take: a plain one excludes all.
      if (open === undefined || !open.keyed) return Effect.void
      const prefix = tenantKey(Context.unsafeGet(fiber.currentContext as Context.Context<Tenant>, Tenant))
      const wanted = [...new Set(keys.map((key) => `${prefix}/${key}`))].filter((key) => !open.locked.has(key)).sort()
      if (wanted.length === 0) return Effect.void
      for (const key of wanted) open.locked.add(key)
      return Effect.asVoid(simple(open.client, wanted.map((key) => `SELECT ${advisoryLock(key)}`).join("; "), "lock keys"))
    })

  const afterCommit = afterCommitOn(openTransaction)

  const write = <A>(f: (tenant: TenantId) => Effect.Effect<A, StorageFailure>) =>
    Effect.withFiberRuntime<A, StorageFailure, Tenant>((fiber) =>
      fiber.getFiberRef(openTransaction) !== undefined ? forTenant(f) : transaction(forTenant(f))
    )

  const locked = <A>(key: string, f: Effect.Effect<A, StorageFailure>): Effect.Effect<A, StorageFailure> =>
    Effect.withFiberRuntime((fiber) => {
      const lock = `SELECT ${advisoryLock(key)}`
      const open = fiber.getFiberRef(openTransaction)
      if (open !== undefined) return Effect.zipRight(simple(open.client, lock, "lock"), f)
      return Effect.uninterruptibleMask((restore) =>
        Effect.flatMap(restore(connect), (client) => {
          const own: OpenTransaction = { client, locked: new Set(), global: true, keyed: false, afterCommit: [] }
          const body = Effect.zipRight(simple(client, `BEGIN; ${lock}`, "begin"), Effect.locally(restore(f), openTransaction, own))
          // What it queued for after its commit (a migrated table marked ready) runs then.
          return Effect.tap(Effect.flatMap(Effect.exit(body), (exit) => finish(own, exit)), () => runAfterCommit(own))
        })
      )
    })

  const inTransaction = Effect.map(FiberRef.get(openTransaction), (open) => open !== undefined)

  const outside = <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.locally(effect, openTransaction, undefined)

  return { query, forTenant, write, transaction, keyedTransaction, lockKeys, leaseTransaction, afterCommit, locked, inTransaction, outside }
}
