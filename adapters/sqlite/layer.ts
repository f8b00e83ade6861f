/**
 * SQLite storage over better-sqlite3: the layer. It opens the connections, sets their
 * pragmas, migrates the event log and the core's collections, and starts the background
 * checkpointer once the storage is busy. The parts: query.ts (SQL), transactions.ts,
 * collections.ts, eventLog.ts; migrations.ts, checkpointer.ts and lock.ts beside them.
 *
 * Connections. A file gets two: a writer for every transaction and a query-only reader for
 * statements outside one. Under WAL each reader statement sees exactly the transactions
 * committed before it, so it never sees another fiber's uncommitted writes and never waits
 * for them. A private `:memory:` database has one connection, and its reads outside a
 * transaction wait for the write lock instead.
 *
 * better-sqlite3 is synchronous, so a statement is a plain call inside one Effect step:
 * this is what keeps a booking creation's ten statements cheap (see docs/architecture.md, "Stack notes").
 */
import Database from "better-sqlite3"
import { Effect, Layer, type Scope } from "effect"
import { StorageFailure } from "../../src/domain/errors.js"
import { CoreCollections } from "../../src/ports/collections.js"
import { Storage, type StorageService } from "../../src/ports/storage.js"
import { type Checkpointer, startCheckpointer } from "./checkpointer.js"
import { eraseTenantDocuments, makeCollections } from "./collections.js"
import { eraseTenantEvents, makeEventLog } from "./eventLog.js"
import { migrateBase } from "./migrations.js"
import { type Connection, failure, messageOf, statementCache } from "./query.js"
import { makeTransactions, retryWhileBusy } from "./transactions.js"

export interface SqliteStorageSettings {
  /**
   * How long a statement waits for another connection's lock before SQLITE_BUSY (5000 by
   * default). A `BEGIN IMMEDIATE` still busy after it is retried with a short backoff.
   */
  readonly busyTimeoutMs?: number
  /**
   * Checkpoint the WAL from a worker thread once the storage has committed 200 writes
   * (default true; files only). See checkpointer.ts.
   */
  readonly checkpointInBackground?: boolean
}

export interface SqliteStorageOptions extends SqliteStorageSettings {
  /** A file path, or ":memory:" for a private database that lives as long as the layer. */
  readonly filename: string
  /** Where start-up says that it migrates, a line at a time (default: nowhere). */
  readonly log?: (line: string) => void
}

/** Writes committed before a storage counts as busy enough for a checkpoint worker. */
const CHECKPOINTER_AFTER_WRITES = 200
/** SQLite's own checkpoint, kept as a safety net behind the worker (~40 MB of WAL). */
const FALLBACK_CHECKPOINT_PAGES = 10_000

const open = (filename: string, busyTimeoutMs: number, what: string): Effect.Effect<Connection, StorageFailure, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.try({
      try: () => new Database(filename, { timeout: busyTimeoutMs }),
      catch: (cause) => new StorageFailure({ detail: `cannot open SQLite database ${filename} (${what}): ${messageOf(cause)}`, cause })
    }),
    (db) => Effect.sync(() => db.close())
  )

/** A private database that a second connection could not share. */
const isPrivate = (filename: string): boolean => filename === "" || filename === ":memory:" || /^file:.*mode=memory/.test(filename)

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
    const backgroundCheckpoints = options.checkpointInBackground !== false && !isPrivate(options.filename)
    let writes = 0
    let checkpointer: Checkpointer | undefined

    // Two processes opening a new file at once: switching it to WAL can be refused busy at
    // once, without waiting (SQLite does not wait where waiting could deadlock).
    yield* retryWhileBusy(Effect.try({
      try: () => {
        writer.pragma("journal_mode = WAL")
        writer.pragma("synchronous = NORMAL")
        writer.pragma("foreign_keys = ON")
        // A write joining a group journals the pages it changes, for its savepoint: in a temp
        // file once past 64 KiB, two pwrite calls a page for the rest of the transaction.
        // In memory, the writes of a group never touch a temp file.
        writer.pragma("temp_store = MEMORY")
      },
      catch: (cause) => failure("set pragmas", cause)
    }))

    const tx = makeTransactions({
      writer,
      writerStatement: statementCache(writer),
      onCommit: (committed) => {
        const before = writes
        writes += committed
        if (before < CHECKPOINTER_AFTER_WRITES && writes >= CHECKPOINTER_AFTER_WRITES && backgroundCheckpoints) {
          checkpointer = startCheckpointer({ filename: options.filename })
          if (checkpointer !== undefined) writer.pragma(`wal_autocheckpoint = ${FALLBACK_CHECKPOINT_PAGES}`)
        }
      }
    })
    const { collection, prepare, readMany } = makeCollections(tx)
    // A group's COMMIT set for the end of the turn is not left behind when the storage closes.
    yield* Effect.addFinalizer(() => Effect.sync(tx.close))

    const began = Date.now()
    options.log?.(`SQLite ${options.filename}: migrating tables …`)
    yield* tx.transaction(Effect.gen(function*() {
      yield* migrateBase(tx.run)
      for (const spec of CoreCollections) yield* prepare(spec)
    }))
    options.log?.(`SQLite ${options.filename}: tables migrated, done (${Date.now() - began} ms)`)

    // Stopped before the connections close (finalizers run in reverse).
    yield* Effect.addFinalizer(() => Effect.suspend(() => checkpointer?.stop ?? Effect.void))

    if (!isPrivate(options.filename)) {
      const reader = yield* open(options.filename, busyTimeoutMs, "reader")
      yield* Effect.try({
        try: () => reader.pragma("query_only = ON"),
        catch: (cause) => failure("set reader pragmas", cause)
      })
      tx.useReader(statementCache(reader))
    }

    const eraseTenant = tx.write((statements, tenant) => {
      eraseTenantDocuments(statements, tenant)
      eraseTenantEvents(statements, tenant)
    })

    return {
      collection,
      readMany,
      events: makeEventLog(tx),
      transaction: tx.transaction,
      afterCommit: tx.afterCommit,
      eraseTenant
    } satisfies StorageService
  })

/** Storage on `filename` (connections closed with the layer). */
export const SqliteStorageLive = (options: SqliteStorageOptions): Layer.Layer<Storage, StorageFailure> =>
  Layer.scoped(Storage, makeSqliteStorage(options))
