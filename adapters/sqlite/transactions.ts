/**
 * Transactions of the SQLite storage, and which connection a statement runs on.
 *
 * The writer is held by a one-permit lock (lock.ts) for the whole of a write, which runs in a
 * transaction begun `IMMEDIATE` (taking the database's write lock up front, so two processes
 * never interleave a read-check-write; a `BEGIN` still busy after `busy_timeout` is retried
 * with a short backoff). Writes that end while that transaction is still open share its
 * COMMIT (group commit, below). The open write is a fiber-local value: every statement of the
 * effect, in any collection, runs on the writer inside it. Nested calls join it. A failed
 * COMMIT stays a typed `StorageFailure`, after a rollback. Statements outside a transaction
 * run on the reader once there is one; with one connection they wait for the lock instead.
 */
import { Clock, Context, Effect, Exit, FiberRef, Schedule } from "effect"
import type { StorageFailure } from "../../src/domain/errors.js"
import { type AfterCommitQueue, afterCommitOn, runAfterCommit } from "../../src/ports/afterCommit.js"
import { currentIdempotentWrites, idempotentTransaction, type StorageService } from "../../src/ports/storage.js"
import { Tenant, type TenantId } from "../../src/ports/tenant.js"
import type { Run } from "./migrations.js"
import { codeOf, type Connection, execute, failure, type Statements } from "./query.js"
import { type Group, GROUP_LIMIT, type Member, slotOf } from "./writerSlots.js"

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
  /** Commits an open group now unless a write holds the writer (before the connections close). */
  readonly close: () => void
  /**
   * Appends with the event log's next seq, inside a write: `lastSeq()` is read once per
   * SQLite transaction (its write lock keeps every other writer, in any process, out until it
   * ends), then counted on here as each `append` returns. An append that throws leaves the
   * count as it was, and a write undone to its savepoint takes its events with it, so the
   * count is read again after one: seqs stay gapless and are never handed out twice.
   */
  readonly withNextSeq: <A>(lastSeq: () => number, append: (seq: number) => A) => A
}

/**
 * Transactions on `writer`. `onCommit` runs right after each successful COMMIT, still
 * holding the lock, with the number of writes it made durable (the layer counts them there to
 * start the checkpointer).
 */
export const makeTransactions = (options: {
  readonly writer: Connection
  readonly writerStatement: Statements
  readonly onCommit: (writes: number) => void
}): Transactions => {
  const { onCommit, writer, writerStatement } = options
  const { leave: leaveSlot, slot } = slotOf(writer)
  const { lock } = slot
  // Set once the schema exists (a reader opened earlier could see no tables).
  let readerStatement: Statements | undefined
  /** The event log's highest seq in the open SQLite transaction, once read; undefined until then. */
  let lastSeq: number | undefined

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
    // Another storage of this file may hold the file's write lock with its group.
    for (const endGroupOf of slot.endGroups) if (endGroupOf !== endGroup) endGroupOf()
    try {
      // A connection left inside a transaction (a ROLLBACK that failed) is ended first.
      if (writer.inTransaction) writer.exec("ROLLBACK")
      execute(writerStatement, "BEGIN IMMEDIATE", [], "begin transaction")
      lastSeq = undefined
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

  /** Rolls back whatever the writer has open, logging a rollback that fails. */
  const rollbackNow = (): void => {
    try {
      // SQLite has already rolled back after some errors (SQLITE_FULL, SQLITE_IOERR).
      if (writer.inTransaction) writer.exec("ROLLBACK")
    } catch (cause) {
      Effect.runFork(Effect.logError("slotwise sqlite: rollback failed", cause))
    }
  }

  // Group commit. A write that ends while another write's transaction is still uncommitted
  // shares that transaction's COMMIT instead of running BEGIN and COMMIT of its own: on a busy
  // server the writes of one turn of the event loop commit together, each behind a savepoint
  // so that one write's failure undoes only its own changes. A COMMIT writes every page the
  // transaction touched to the WAL, so writes that touch the same pages (a table's and its
  // indexes' last leaves) write them once per group instead of once each. Every member, done
  // or refused, answers only once the group's COMMIT has ended, with its failure if it failed:
  // no caller hears of a write, or of a refusal that may rest on one, before it is durable as
  // a COMMIT makes it. Only with a reader connection (a file): reads outside a transaction
  // then never see a write before its COMMIT. Alone (one connection), each write commits.
  let group: Group | undefined

  const settle = (members: ReadonlyArray<Member>, failed: StorageFailure | undefined): void => {
    for (const member of members) {
      member.settled = true
      member.failure = failed
      member.resume?.(failed === undefined ? Effect.void : Effect.fail(failed))
    }
  }

  /** Ends the open group: COMMIT (or a rollback when it fails), then tells each member which. */
  function endGroup(): void {
    const ending = group
    if (ending === undefined) return
    group = undefined
    let failed: StorageFailure | undefined
    try {
      execute(writerStatement, "COMMIT", [], "commit")
      onCommit(ending.writes)
    } catch (error) {
      failed = failure("commit", error)
      rollbackNow()
    }
    settle(ending.members, failed)
  }

  slot.endGroups.add(endGroup)

  /** SQLite rolled the whole transaction back under the group (SQLITE_FULL, SQLITE_IOERR): all of it is lost. */
  const abandonGroup = (why: StorageFailure): void => {
    const lost = group
    group = undefined
    if (lost !== undefined) settle(lost.members, why)
  }

  /** Frees the writer, first ending the groups whose COMMIT fell due meanwhile. */
  const releaseWriter = (): void => {
    if (slot.due.size > 0) {
      for (const end of slot.due) end()
      slot.due.clear()
    }
    lock.release()
  }

  /** The group's COMMIT, at the end of the turn: now, or when the write holding the lock ends. */
  const commitDue = (): void => {
    if (group === undefined) return
    if (!lock.tryAcquire()) {
      slot.due.add(endGroup)
      return
    }
    endGroup()
    releaseWriter()
  }

  /** Joins the open group behind a savepoint, or begins one: true when this write began it. */
  const join = Effect.suspend((): Effect.Effect<boolean, StorageFailure> => {
    if (group === undefined) {
      return Effect.map(begin, () => {
        group = { members: [], writes: 0, commitDue: false }
        return true
      })
    }
    try {
      execute(writerStatement, "SAVEPOINT member", [], "savepoint")
      return Effect.succeed(false)
    } catch (error) {
      return Effect.fail(failure("savepoint", error))
    }
  })

  /** Undoes the changes of the write behind the savepoint, and ends the savepoint. */
  const undoMember = (): void => {
    lastSeq = undefined
    execute(writerStatement, "ROLLBACK TO member", [], "roll back to savepoint")
    execute(writerStatement, "RELEASE member", [], "release savepoint")
  }

  /** Waits for `member`'s group to end, then ends as the write did, or as the COMMIT failed. */
  const answer = <A, E>(member: Member, exit: Exit.Exit<A, E>): Effect.Effect<A, E | StorageFailure> => {
    const told = Effect.suspend(() => {
      if (!member.settled) {
        return Effect.async<void, StorageFailure>((resume) => {
          member.resume = resume
        })
      }
      return member.failure === undefined ? Effect.void : Effect.fail(member.failure)
    })
    return Effect.zipRight(told, exit)
  }

  /**
   * After a write's effect ended with `exit`, still holding the lock: keeps or undoes its
   * changes and returns what it answers with once the lock is released.
   */
  const leave = <A, E>(began: boolean, exit: Exit.Exit<A, E>): Effect.Effect<A, E | StorageFailure> => {
    let outcome: Exit.Exit<A, E | StorageFailure> = exit
    if (began && exit._tag === "Failure") {
      // Alone in its transaction: undo it all, nobody else waits on it.
      rollbackNow()
      group = undefined
      return exit
    }
    if (!began) {
      try {
        if (exit._tag === "Failure") undoMember()
        else execute(writerStatement, "RELEASE member", [], "release savepoint")
      } catch (error) {
        outcome = Exit.fail(failure(exit._tag === "Failure" ? "roll back to savepoint" : "release savepoint", error))
        try {
          undoMember()
        } catch {
          // Left to the check below: a savepoint that cannot be undone loses the transaction.
        }
      }
    }
    if (!writer.inTransaction) {
      const lost = failure("transaction", new Error("SQLite rolled the transaction back"))
      abandonGroup(lost)
      return exit._tag === "Failure" ? exit : Effect.fail(lost)
    }
    const open = group!
    const member: Member = { settled: false, failure: undefined, resume: undefined }
    open.members.push(member)
    if (outcome._tag === "Success") open.writes++
    if (readerStatement === undefined || open.members.length >= GROUP_LIMIT) endGroup()
    else if (!open.commitDue) {
      open.commitDue = true
      setImmediate(commitDue)
    }
    return answer(member, outcome)
  }

  const transaction = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E | StorageFailure, R> =>
    Effect.withFiberRuntime<A, E | StorageFailure, R>((fiber) => {
      if (fiber.getFiberRef(openTransaction) !== undefined) return effect
      return idempotentTransaction(fiber.getFiberRef(currentIdempotentWrites), effect, outermost)
    })

  /** A new transaction for `effect` (called where it runs: its state is its own). */
  const outermost = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E | StorageFailure, R> => {
    const state: OpenTransaction = { afterCommit: [] }
    // One uninterruptible region: the lock is released on every path out of it (joining,
    // the effect and leaving all end in an Exit, never a throw), and the fiber's
    // transaction is set and cleared by hand (`Effect.locally` costs ~8 µs). The wait for
    // the group's COMMIT comes after the release and is uninterruptible too.
    const committed = Effect.uninterruptibleMask((restore) =>
      Effect.zipRight(
        lock.acquire(restore),
        Effect.flatMap(
          Effect.exit(Effect.flatMap(join, (began) =>
            Effect.zipRight(
              FiberRef.set(openTransaction, state),
              Effect.flatMap(
                Effect.exit(restore(effect)),
                (exit) => Effect.zipRight(FiberRef.set(openTransaction, undefined), Effect.sync(() => leave(began, exit)))
              )
            ))),
          (left): Effect.Effect<A, E | StorageFailure> => {
            releaseWriter()
            return left._tag === "Success" ? left.value : Effect.failCause(left.cause)
          }
        )
      )
    )
    return Effect.tap(committed, () => runAfterCommit(state))
  }

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
    },
    withNextSeq: (read, append) => {
      const seq = (lastSeq ?? read()) + 1
      const appended = append(seq)
      lastSeq = seq
      return appended
    },
    close: () => {
      commitDue()
      slot.endGroups.delete(endGroup)
      leaveSlot()
    }
  }
}
