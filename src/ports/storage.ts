/**
 * The storage port. Resources are documents in tenant-scoped collections with a few
 * declared index columns (derived from the document by the collection's spec), which is
 * all the core ever filters or orders by; events live in an append-only log whose sequence
 * numbers follow commit order. Adapters: adapters/memory, adapters/sqlite, adapters/postgres.
 */
import { Context, Effect, FiberRef, Option } from "effect"
import type { StorageFailure } from "../domain/errors.js"
import type { Event } from "../events/catalogue.js"
import type { Tenant, TenantId } from "./tenant.js"

export type IndexValue = string | number | null

export interface IndexSpec<A> {
  readonly type: "text" | "integer"
  readonly get: (doc: A) => IndexValue
}

export interface CollectionSpec<A extends { readonly id: string }> {
  /** Stable name; the SQLite table is `c_<name>`. */
  readonly name: string
  readonly indexes: { readonly [column: string]: IndexSpec<A> }
  /** Index columns that order lists; `id` is always the final tie-break. */
  readonly order: ReadonlyArray<string>
  /**
   * Which column groups a database adapter indexes (each followed by `id`). Defaults to
   * one index per column. Every index costs every write, so hot collections name the few
   * their queries need; conditions on other columns still work, by scanning.
   */
  readonly storageIndexes?: ReadonlyArray<ReadonlyArray<string>>
  /**
   * Index columns null in most documents and filtered only by value (`eq`, `in` without
   * null): a database adapter's storage index led by one leaves out the rows where it is
   * null, so writing such a row updates one index fewer.
   */
  readonly sparseColumns?: ReadonlyArray<string>
  /**
   * Column groups a database adapter also indexes across tenants (each followed by `id`, then
   * the tenant), for the ordered scans of `listAcrossTenants` (a worker's next due job): the
   * storage indexes all begin with the tenant, so such a scan could use none of them.
   */
  readonly acrossTenantIndexes?: ReadonlyArray<ReadonlyArray<string>>
  /**
   * Document fields added after documents of the collection were first stored, each with
   * the value an earlier document means by leaving it out. Database adapters write it into
   * the earlier documents once, when they migrate, so every document read has the field.
   * A `ListOfField` value stands for a one-element list of another field of the same document;
   * a `FieldOfRelated` for the same field of a related document of another collection.
   */
  readonly addedFields?: { readonly [field: string]: unknown }
}

/** In `addedFields`: the earlier document's value of `field`, as a one-element list. */
export class ListOfField {
  constructor(readonly field: string) {}
}

/**
 * In `addedFields`: the same field of a related document, for documents whose true value was
 * kept elsewhere (a series' attendees, on its bookings). The related document is the first,
 * by `orderBy` then id, of the collection named `from` whose index columns equal this
 * document's columns as `match` pairs them (`{ their column: our column }`, `id` included);
 * without one, or when it lacks the field too, `fallback` (a value or a `ListOfField`).
 */
export class FieldOfRelated {
  constructor(
    readonly from: string,
    readonly match: { readonly [theirs: string]: string },
    readonly orderBy: string,
    readonly fallback: unknown
  ) {}
}

export type Condition =
  | { readonly column: string; readonly op: "eq" | "ne" | "lt" | "lte" | "gt" | "gte"; readonly value: IndexValue }
  | { readonly column: string; readonly op: "in"; readonly value: ReadonlyArray<IndexValue> }

export interface IndexedRow {
  readonly id: string
  readonly [column: string]: IndexValue
}

export interface ListQuery {
  readonly where?: ReadonlyArray<Condition>
  /** Keyset: the order columns' values and then the id of the last row already seen. */
  readonly after?: ReadonlyArray<IndexValue>
  /** At most this many rows; all when absent. */
  readonly limit?: number
  /** `listIndexes` only: the index columns wanted besides `id` (default: all). */
  readonly columns?: ReadonlyArray<string>
  /** `listIndexes` only: `false` when the caller does not need the rows in order. */
  readonly ordered?: boolean
  /**
   * `listAcrossTenants` inside `leaseTransaction` only: lock the rows returned until the
   * transaction ends, leaving out rows another transaction has locked (PostgreSQL's
   * `FOR UPDATE SKIP LOCKED`). Adapters without `leaseTransaction` ignore it.
   */
  readonly lock?: "skip-locked"
}

export interface ColumnsQuery {
  readonly where?: ReadonlyArray<Condition>
  /** The index column whose values group the rows. */
  readonly groupBy: string
  /** The index columns wanted, each as one array of values per group. */
  readonly columns: ReadonlyArray<string>
}

/** One group's rows as columns: an array per requested column, aligned row by row. */
export type ColumnValues = ReadonlyArray<ReadonlyArray<IndexValue>>

export interface Collection<A extends { readonly id: string }> {
  readonly spec: CollectionSpec<A>
  readonly get: (id: string) => Effect.Effect<Option.Option<A>, StorageFailure, Tenant>
  /** Fails with a StorageFailure if the id exists. */
  readonly insert: (doc: A) => Effect.Effect<void, StorageFailure, Tenant>
  /** Replaces the document with the same id. */
  readonly update: (doc: A) => Effect.Effect<void, StorageFailure, Tenant>
  readonly remove: (id: string) => Effect.Effect<void, StorageFailure, Tenant>
  /** Rows matching every condition, in `spec.order` then id, ascending. */
  readonly list: (query: ListQuery) => Effect.Effect<ReadonlyArray<A>, StorageFailure, Tenant>
  /**
   * Like `list`, but only the id and the index columns: hot paths (slot computation over
   * thousands of bookings) read these without decoding whole documents.
   */
  readonly listIndexes: (query: ListQuery) => Effect.Effect<ReadonlyArray<IndexedRow>, StorageFailure, Tenant>
  /**
   * The matching rows' `columns`, grouped by the `groupBy` column, rows in no particular
   * order: a few arrays where `listIndexes` would make thousands of objects, for the scans
   * that read a month of bookings for a team.
   */
  readonly listColumns: (query: ColumnsQuery) => Effect.Effect<ReadonlyMap<IndexValue, ColumnValues>, StorageFailure, Tenant>
  /** Across every tenant (authentication, background dispatch); not for tenant-facing reads. */
  readonly listAcrossTenants: (
    query: ListQuery
  ) => Effect.Effect<ReadonlyArray<{ readonly tenant: TenantId; readonly doc: A }>, StorageFailure>
}

/**
 * A read of a collection as a value (`list`, `listIndexes` or `listColumns` and its query),
 * for `StorageService.readMany` to run with others in one go; `A` is what it reads.
 */
export type CollectionRead<A> =
  & { readonly spec: CollectionSpec<any>; readonly [readResult]?: A }
  & (
    | { readonly op: "list"; readonly query: ListQuery }
    | { readonly op: "listIndexes"; readonly query: ListQuery }
    | { readonly op: "listColumns"; readonly query: ColumnsQuery }
  )

/** Carries a read's result type (never set: a type only). */
declare const readResult: unique symbol

/** What each of `reads` reads, in order. */
export type ReadResults<T extends ReadonlyArray<CollectionRead<any>>> = {
  -readonly [K in keyof T]: T[K] extends CollectionRead<infer A> ? A : never
}

/** The reads `readMany` runs, each answering as the collection method of its name does. */
export const Read = {
  list: <A extends { readonly id: string }>(spec: CollectionSpec<A>, query: ListQuery): CollectionRead<ReadonlyArray<A>> => ({
    op: "list",
    spec,
    query
  }),
  listIndexes: (spec: CollectionSpec<any>, query: ListQuery): CollectionRead<ReadonlyArray<IndexedRow>> => ({
    op: "listIndexes",
    spec,
    query
  }),
  listColumns: (spec: CollectionSpec<any>, query: ColumnsQuery): CollectionRead<ReadonlyMap<IndexValue, ColumnValues>> => ({
    op: "listColumns",
    spec,
    query
  })
}

export interface StoredEvent {
  /** Position in the log: increases in commit order, never reused. */
  readonly seq: number
  readonly tenant: TenantId
  readonly event: Event
}

export interface EventLog {
  readonly append: (event: Event) => Effect.Effect<void, StorageFailure, Tenant>
  readonly get: (id: string) => Effect.Effect<Option.Option<Event>, StorageFailure, Tenant>
  /** The tenant's events after `after` (a seq), oldest first, optionally of some types only. */
  readonly read: (query: {
    readonly after: number
    readonly types?: ReadonlyArray<string>
    readonly limit: number
  }) => Effect.Effect<ReadonlyArray<StoredEvent>, StorageFailure, Tenant>
  /** The highest seq in the log (0 when empty): where a live subscription starts. */
  readonly lastSeq: Effect.Effect<number, StorageFailure>
  /** Every tenant's events after `after`, for dispatchers. */
  readonly readAcrossTenants: (query: {
    readonly after: number
    readonly limit: number
  }) => Effect.Effect<ReadonlyArray<StoredEvent>, StorageFailure>
}

/** What processes sharing a database tell each other: the log grew; credentials changed; a custom domain was verified or deleted. */
export type SignalTopic = "events" | "credentials" | "domains" | "reminders"

/**
 * Signals between processes that share one database (PostgreSQL: LISTEN/NOTIFY). They are
 * hints, never the record: one may be lost (a connection drops), so a listener still needs
 * its fallback (the dispatcher polls; the credential cache expires).
 */
export interface StorageSignals {
  /** Sends `topic` to every process on the database once the open transaction commits (at once outside one). */
  readonly publish: (topic: SignalTopic) => Effect.Effect<void>
  /** Calls `listener` when a process (maybe this one) published `topic`; returns the unsubscribe. */
  readonly subscribe: (topic: SignalTopic, listener: () => void) => () => void
}

export interface StorageService {
  readonly collection: <A extends { readonly id: string }>(spec: CollectionSpec<A>) => Collection<A>
  readonly events: EventLog
  /**
   * Optional: runs independent reads of the tenant's collections together, what each answers
   * being what its collection method would: in one step (an in-process database) or one
   * round trip (a server database), inside the open transaction if there is one. Without it
   * they run one after another through the collections (`readManyOf`).
   */
  readonly readMany?: <const T extends ReadonlyArray<CollectionRead<any>>>(
    reads: T
  ) => Effect.Effect<ReadResults<T>, StorageFailure, Tenant>
  /**
   * Runs `effect` as one atomic write: all its writes and events commit together or not at
   * all, and no other write transaction (in this process or another on the same database)
   * interleaves with it. Nested calls join the outer transaction.
   */
  readonly transaction: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E | StorageFailure, R>
  /**
   * Optional: an atomic write like `transaction` that excludes only what it names. It waits
   * for (and holds off) the tenant's `transaction`s, but runs alongside the tenant's other
   * keyed transactions, of which only those that lock a common key (`lockKeys`) wait for
   * each other. Without it, `transaction` runs in its place (every write of the tenant then
   * excludes every other, which is at least as strict). Nested calls join the outer transaction.
   */
  readonly keyedTransaction?: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E | StorageFailure, R>
  /**
   * Optional: inside a keyed transaction, takes the tenant's locks on `keys` (all at once, in
   * one order, so two transactions never wait for each other in a cycle), held to its end; the
   * reads that decide its writes come after. Elsewhere (and without it) a no-op: a
   * `transaction` excludes every other write already.
   */
  readonly lockKeys?: (keys: ReadonlyArray<string>) => Effect.Effect<void, StorageFailure, Tenant>
  /**
   * Runs `effect` once the open transaction has committed, in the order registered, and
   * never if it rolls back; outside a transaction, at once. Subscribers of the event log hear
   * of a change through this, only after it is durable.
   */
  readonly afterCommit: (effect: Effect.Effect<void>) => Effect.Effect<void>
  /** Deletes every document and event of the tenant (sandbox reset). */
  readonly eraseTenant: Effect.Effect<void, StorageFailure, Tenant>
  /**
   * Optional: signals between processes on the same database. An adapter that has them
   * publishes `events` itself after every commit that appended events.
   */
  readonly signals?: StorageSignals
  /**
   * Optional: a transaction for taking leases that runs alongside other write transactions
   * (other tenants' writes, other processes taking leases) instead of excluding them, like
   * `transaction` without a tenant does. It reads the rows it leases with
   * `lock: "skip-locked"` and writes only those, so two processes never lease one row and
   * neither waits for the other. Without it, leases are taken in `transaction`.
   */
  readonly leaseTransaction?: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E | StorageFailure, R>
  /**
   * How many independent reads the core may have in flight at once here and now (absent:
   * 1, one after another). A server database outside a transaction runs each on its own
   * connection, so issuing them together overlaps their round trips; an in-process database
   * gains nothing, and forking fibers for its reads only costs.
   */
  readonly readConcurrency?: Effect.Effect<number>
}

export class Storage extends Context.Tag("slotwise/Storage")<Storage, StorageService>() {}

/**
 * The idempotent request this fiber runs (Idempotency.ts): every write transaction that
 * commits during it records its result with the request's key IN that transaction, so a
 * retry after an unknown outcome (a COMMIT whose answer was lost, a process that died) is
 * given what committed instead of writing again. A request's transactions are matched to an
 * earlier attempt's by their order, so they run one after another (as every use case's do).
 */
export interface IdempotentWrites {
  /** What an earlier attempt of the request committed as its next transaction's result, if it did. */
  readonly replay: () => Option.Option<Effect.Effect<unknown, unknown>>
  /** Inside the transaction about to commit `result`: keeps it with the request's key. */
  readonly committing: (result: unknown) => Effect.Effect<void, StorageFailure>
}

export const currentIdempotentWrites = FiberRef.unsafeMake<IdempotentWrites | undefined>(undefined)

/**
 * For adapters: an outermost write transaction (`open` runs `effect` in a new one) as the
 * idempotent request in progress, if any, wants it: the result an earlier attempt committed,
 * or the transaction with its result kept in it. The one place the rule is applied.
 */
export const idempotentTransaction = <A, E, R>(
  writes: IdempotentWrites | undefined,
  effect: Effect.Effect<A, E, R>,
  open: (effect: Effect.Effect<A, E | StorageFailure, R>) => Effect.Effect<A, E | StorageFailure, R>
): Effect.Effect<A, E | StorageFailure, R> => {
  if (writes === undefined) return open(effect)
  const earlier = writes.replay()
  if (Option.isSome(earlier)) return earlier.value as Effect.Effect<A, E>
  return open(Effect.tap(effect, writes.committing))
}

/** `storage`'s keyed transaction, or its plain one where it has none (at least as strict). */
export const keyedTransactionOf = (storage: StorageService) => storage.keyedTransaction ?? storage.transaction

/** One read by its collection's own method (a statement of its own). */
export const readOne = (storage: StorageService) => <A>(read: CollectionRead<A>): Effect.Effect<A, StorageFailure, Tenant> =>
  (storage.collection(read.spec)[read.op] as (query: unknown) => Effect.Effect<A, StorageFailure, Tenant>)(read.query)

/** `storage`'s `readMany`, or its collections' own methods one after another where it has none. */
export const readManyOf = (storage: StorageService): NonNullable<StorageService["readMany"]> => {
  if (storage.readMany !== undefined) return storage.readMany
  const one = readOne(storage)
  return <const T extends ReadonlyArray<CollectionRead<any>>>(reads: T) =>
    Effect.forEach(reads, one) as unknown as Effect.Effect<ReadResults<T>, StorageFailure, Tenant>
}

/** `storage`'s `lockKeys`, or nothing to do where it has none. */
export const lockKeysOf = (storage: StorageService) =>
  storage.lockKeys ?? ((_keys: ReadonlyArray<string>): Effect.Effect<void, StorageFailure, Tenant> => Effect.void)
