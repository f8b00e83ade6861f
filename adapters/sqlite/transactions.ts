/**
 * Transactions of the SQLite storage, and which connection a statement runs on.
 *
 * The writer is held by a one-permit lock (lock.ts) for the whole transaction, which begins
 * `IMMEDIATE` (taking the database's write lock up front, so two processes never interleave
 * a read-check-write; a `BEGIN` still busy after `busy_timeout` is retried with a short
 * backoff). The open transaction is a fiber-local value: every statement of the effect, in
 * any collection, runs on the writer inside it. Nested calls join it. A failed COMMIT stays
 * a typed `StorageFailure`, after a rollback. Statements outside a transaction run on the
 * reader once there is one; with one connection they wait for the lock instead.
 */
import { Clock, Context, Effect, type Exit, FiberRef, Schedule } from "effect"
import type { StorageFailure } from "../../src/domain/errors.js"
import { type AfterCommitQueue, afterCommitOn, runAfterCommit } from "../../src/ports/afterCommit.js"
import type { StorageService } from "../../src/ports/storage.js"
import { Tenant, type TenantId } from "../../src/ports/tenant.js"
import { makeLock } from "./lock.js"
import type { Run } from "./migrations.js"
import { codeOf, type Connection, execute, failure, type Statements } from "./query.js"

interface OpenTransaction extends AfterCommitQueue {
  /** Run once the transaction has committed, after the lock is released. */
  readonly afterCommit: Array<Effect.Effect<void>>
}

/** The transaction this fiber has open, if any (forked fibers inherit it). */
const openTransaction = FiberRef.unsafeMake<OpenTransaction | undefined>(undefined)

const isBusy = (failure: StorageFailure): boolean => {
  const code = codeOf(failure.cause)
  return code !== undefined && (code.startsWith("SQLITE_BUSY") || code.startsWith("SQLITE_LOCKED"))
}

/**
 * Retries of a `BEGIN IMMEDIATE` (or of setting a new file's journal mode) that is still busy
 * after `busy_timeout` (WAL recovery, a checkpoint or another process making the file can
 * return SQLITE_BUSY without waiting): 10 ms doubling, at most 250 ms,
 * jittered, 12 attempts. It runs on the live clock so a TestClock never stalls it.
 */
const busyRetry = Schedule.exponential("10 millis").pipe(
  Schedule.union(Schedule.spaced("250 millis")),
  Schedule.jittered,
  Schedule.intersect(Schedule.recurs(12))
)
const liveClock = Clock.make()

/** `effect` retried on `busyRetry` while it fails busy: for what `busy_timeout` does not cover. */
export const retryWhileBusy = <A>(effect: Effect.Effect<A, StorageFailure>): Effect.Effect<A, StorageFailure> =>
  effect.pipe(Effect.retry({ schedule: busyRetry, while: isBusy }), Effect.withClock(liveClock))

const attempt = <A>(f: () => A): Effect.Effect<A, StorageFailure> => {
  try {
    return Effect.succeed(f())
  } catch (cause) {
    return Effect.fail(failure("sqlite", cause))
  }
}

export interface Transactions {
  readonly transaction: StorageService["transaction"]
  readonly afterCommit: StorageService["afterCommit"]
  /** Runs `f` for the tenant in context: on the writer inside a transaction, else the reader. */
  readonly forTenant: <A>(f: (statements: Statements, tenant: TenantId) => A) => Effect.Effect<A, StorageFailure, Tenant>
  /** Statements that span every tenant (start-up, dispatchers, authentication). */
  readonly acrossTenants: <A>(f: (statements: Statements) => A) => Effect.Effect<A, StorageFailure>
  /** A write for the tenant in context: in the open transaction, or in one of its own. */
  readonly write: <A>(f: (statements: Statements, tenant: TenantId) => A) => Effect.Effect<A, StorageFailure, Tenant>
  /** Migration steps, on the writer inside the open transaction. */
  readonly run: Run
  /** Statements outside a transaction go to `reader` from now on (once the schema exists). */
  readonly useReader: (reader: Statements) => void
}

/**
 * Transactions on `writer`. `onCommit` runs right after each successful COMMIT, still
 * holding the lock (the layer counts commits there to start the checkpointer).
 */
export const makeTransactions = (options: {
  readonly writer: Connection
  readonly writerStatement: Statements
  readonly onCommit: () => void
}): Transactions => {
  const { onCommit, writer, writerStatement } = options
  const lock = makeLock()
  // Set once the schema exists (a reader opened earlier could see no tables).
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

  const forTenant = <A>(f: (statements: Statements, tenant: TenantId) => A): Effect.Effect<A, StorageFailure, Tenant> =>
    onConnection((statements, context) => f(statements, Context.unsafeGet(context as Context.Context<Tenant>, Tenant)))

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
    return retryWhileBusy(Effect.suspend(() => {
      const again = beginNow()
      return again === undefined ? Effect.void : Effect.fail(again)
    }))
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
    onCommit()
    return exit
  }

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

  const afterCommit = afterCommitOn(openTransaction)

  const write = <A>(f: (statements: Statements, tenant: TenantId) => A): Effect.Effect<A, StorageFailure, Tenant> =>
    Effect.withFiberRuntime((fiber) =>
      fiber.getFiberRef(openTransaction) !== undefined
        ? attempt(() => f(writerStatement, Context.unsafeGet(fiber.currentContext as Context.Context<Tenant>, Tenant)))
        : transaction(forTenant(f))
    ) as Effect.Effect<A, StorageFailure, Tenant>

  const run: Run = (text, params, what) => acrossTenants((statements) => execute(statements, text, params, what))

  return {
    transaction,
    afterCommit,
    forTenant,
    acrossTenants,
    write,
    run,
    useReader: (reader) => {
      readerStatement = reader
    }
  }
}
