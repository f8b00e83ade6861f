/**
 * In-memory storage. A write transaction collects its writes and events in an overlay held
 * in a FiberRef and applies them in one synchronous step at commit, under a one-permit
 * semaphore: readers never see half a transaction, and a failed one leaves nothing behind.
 */
import { Effect, FiberRef, Layer, Option } from "effect"
import { StorageFailure } from "../../src/domain/errors.js"
import { deepFreeze } from "../../src/ports/frozen.js"
import type { Event } from "../../src/events/catalogue.js"
import {
  type Collection,
  type CollectionRead,
  type CollectionSpec,
  type ColumnsQuery,
  type ColumnValues,
  type Condition,
  currentIdempotentWrites,
  idempotentTransaction,
  type IndexedRow,
  type IndexValue,
  type ListQuery,
  type ReadResults,
  Storage,
  type StorageService,
  type StoredEvent
} from "../../src/ports/storage.js"
import { Tenant, type TenantId } from "../../src/ports/tenant.js"
import { candidates, compareValues, emptyTable, firstWhere, type PageCut, putRow, type Row, type Table, valueOf } from "./ordered.js"

const DELETED = Symbol("deleted")

interface Overlay {
  /** collection → tenant key → id → row or DELETED */
  readonly writes: Map<string, Map<string, Map<string, Row | typeof DELETED>>>
  readonly events: Array<{ readonly tenant: TenantId; readonly event: Event }>
  readonly erased: Set<string>
  /** Run once the transaction has committed, after the lock is released. */
  readonly afterCommit: Array<Effect.Effect<void>>
}

const tenantKey = (t: TenantId) => `${t.account_id}\u0000${t.environment}`

const matches = (row: Row, conditions: ReadonlyArray<Condition>): boolean =>
  conditions.every((c) => {
    const v = valueOf(row, c.column)
    switch (c.op) {
      case "in":
        return c.value.includes(v)
      case "eq":
        return v === c.value
      case "ne":
        return v !== c.value
      case "lt":
        return v !== null && c.value !== null && v < c.value
      case "lte":
        return v !== null && c.value !== null && v <= c.value
      case "gt":
        return v !== null && c.value !== null && v > c.value
      case "gte":
        return v !== null && c.value !== null && v >= c.value
    }
  })

const sortKey = (spec: CollectionSpec<any>, row: Row): Array<IndexValue> => [
  ...spec.order.map((column) => row.index[column] ?? null),
  row.doc.id
]

const compareKeys = (a: ReadonlyArray<IndexValue>, b: ReadonlyArray<IndexValue>): number => {
  for (let i = 0; i < a.length; i++) {
    const c = compareValues(a[i] ?? null, b[i] ?? null)
    if (c !== 0) return c
  }
  return 0
}

export const makeMemoryStorage: Effect.Effect<StorageService> = Effect.gen(function*() {
  const lock = yield* Effect.makeSemaphore(1)
  const currentOverlay = FiberRef.unsafeMake<Overlay | undefined>(undefined)
  /** collection → tenant key → rows */
  const tables = new Map<string, Map<string, Table>>()
  /** In seq order, which `after` is searched in. */
  const eventLog: Array<StoredEvent> = []
  /** By tenant key and event id. */
  const eventsById = new Map<string, StoredEvent>()
  const eventKey = (tenant: TenantId, id: string) => `${tenantKey(tenant)}\u0000${id}`
  let lastSeq = 0
  /** The position of the first event after `seq`. */
  const firstAfter = (seq: number): number => firstWhere(eventLog, (stored) => stored.seq > seq)

  const tableOf = (name: string, key: string): Table => {
    let byTenant = tables.get(name)
    if (byTenant === undefined) tables.set(name, byTenant = new Map())
    let table = byTenant.get(key)
    if (table === undefined) byTenant.set(key, table = emptyTable())
    return table
  }

  const overlayOf = (overlay: Overlay, name: string, key: string) => {
    let byTenant = overlay.writes.get(name)
    if (byTenant === undefined) overlay.writes.set(name, byTenant = new Map())
    let rows = byTenant.get(key)
    if (rows === undefined) byTenant.set(key, rows = new Map())
    return rows
  }

  const commit = (overlay: Overlay) => {
    for (const key of overlay.erased) {
      for (const byTenant of tables.values()) byTenant.delete(key)
      // Compacted in place, in one pass: the log stays in seq order.
      let kept = 0
      for (const stored of eventLog) {
        if (tenantKey(stored.tenant) === key) eventsById.delete(eventKey(stored.tenant, stored.event.id))
        else eventLog[kept++] = stored
      }
      eventLog.length = kept
    }
    for (const [name, byTenant] of overlay.writes) {
      for (const [key, rows] of byTenant) {
        const table = tableOf(name, key)
        for (const [id, row] of rows) putRow(table, id, row === DELETED ? undefined : row)
      }
    }
    for (const { event, tenant } of overlay.events) {
      const stored = { seq: ++lastSeq, tenant, event }
      eventLog.push(stored)
      eventsById.set(eventKey(tenant, event.id), stored)
    }
  }

  const transaction = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E | StorageFailure, R> =>
    Effect.withFiberRuntime((fiber) => {
      if (fiber.getFiberRef(currentOverlay) !== undefined) return effect
      return idempotentTransaction(fiber.getFiberRef(currentIdempotentWrites), effect, (effect) => {
        const overlay: Overlay = { writes: new Map(), events: [], erased: new Set(), afterCommit: [] }
        return lock.withPermits(1)(
          Effect.locally(effect, currentOverlay, overlay).pipe(Effect.tap(() => Effect.sync(() => commit(overlay))))
        ).pipe(Effect.tap(() => Effect.forEach(overlay.afterCommit, (after) => after, { discard: true })))
      })
    })

  const afterCommit = (effect: Effect.Effect<void>): Effect.Effect<void> =>
    Effect.flatMap(FiberRef.get(currentOverlay), (open) => {
      if (open === undefined) return effect
      open.afterCommit.push(effect)
      return Effect.void
    })

  /** Runs a write in the open transaction, or in one of its own. */
  const write = <A>(f: (overlay: Overlay, tenant: TenantId) => A): Effect.Effect<A, StorageFailure, Tenant> =>
    transaction(
      Effect.flatMap(Tenant, (tenant) => Effect.flatMap(FiberRef.get(currentOverlay), (overlay) => Effect.sync(() => f(overlay!, tenant))))
    )

  /** The fiber's view of one collection of its tenant: committed rows plus its own overlay. */
  interface View {
    readonly get: (id: string) => Row | undefined
    /** The rows that may meet `where` (all rows for none), or `page` of them: to be tested against it still. */
    readonly rows: (where: ReadonlyArray<Condition>, page?: PageCut) => Iterable<Row>
  }
  const viewOf = (spec: CollectionSpec<any>, tenant: TenantId, overlay: Overlay | undefined): View => {
    const key = tenantKey(tenant)
    const base = overlay?.erased.has(key) ? emptyTable() : tableOf(spec.name, key)
    const pending = overlay?.writes.get(spec.name)?.get(key)
    if (pending === undefined || pending.size === 0) {
      return { get: (id) => base.rows.get(id), rows: (where, page) => candidates(spec, base, where, page) }
    }
    const unwritten = (row: Row) => !pending.has(row.doc.id)
    return {
      get: (id) => {
        const row = pending.get(id)
        return row === DELETED ? undefined : row ?? base.rows.get(id)
      },
      // Merged lazily: a transaction's reads must not copy the whole table. A page walked
      // from the committed rows skips the ones this transaction rewrote; its own are sorted in.
      *rows(where, page) {
        const cut = page === undefined ? undefined : { ...page, accept: (row: Row) => unwritten(row) && page.accept(row) }
        for (const row of candidates(spec, base, where, cut)) if (unwritten(row)) yield row
        for (const row of pending.values()) if (row !== DELETED) yield row
      }
    }
  }

  const select = (spec: CollectionSpec<any>, rowsOf: View["rows"], query: ListQuery): Array<Row> => {
    const where = query.where ?? []
    const after = query.after
    const limit = query.limit
    const page = limit === undefined ? undefined : { after, limit, accept: (row: Row) => matches(row, where) }
    // Each row's sort key is built once, not once per comparison.
    const keyed: Array<{ readonly row: Row; readonly key: Array<IndexValue> }> = []
    for (const row of rowsOf(where, page)) {
      if (!matches(row, where)) continue
      const key = sortKey(spec, row)
      if (after !== undefined && compareKeys(key, after) <= 0) continue
      keyed.push({ row, key })
    }
    keyed.sort((a, b) => compareKeys(a.key, b.key))
    return (limit === undefined ? keyed : keyed.slice(0, limit)).map((entry) => entry.row)
  }

  /** The reads of a collection's view, one function each for the collection and `readMany`. */
  const runs = {
    list: (spec: CollectionSpec<any>, view: View, query: ListQuery) => select(spec, view.rows, query).map((row) => row.doc),
    listIndexes: (spec: CollectionSpec<any>, view: View, query: ListQuery): Array<IndexedRow> =>
      select(spec, view.rows, query).map((row) => ({ ...row.index, id: row.doc.id })),
    listColumns: (_spec: CollectionSpec<any>, view: View, { columns, groupBy, where = [] }: ColumnsQuery) => {
      const groups = new Map<IndexValue, Array<Array<IndexValue>>>()
      for (const row of view.rows(where)) {
        if (!matches(row, where)) continue
        const key = valueOf(row, groupBy)
        let group = groups.get(key)
        if (group === undefined) groups.set(key, group = columns.map(() => []))
        for (let i = 0; i < columns.length; i++) group[i]!.push(valueOf(row, columns[i]!))
      }
      return groups as ReadonlyMap<IndexValue, ColumnValues>
    }
  }

  /** The reads one after another, in one step. */
  const readMany = <const T extends ReadonlyArray<CollectionRead<any>>>(reads: T): Effect.Effect<ReadResults<T>, never, Tenant> =>
    Effect.flatMap(
      Tenant,
      (tenant) =>
        Effect.map(
          FiberRef.get(currentOverlay),
          (overlay) =>
            reads.map((read) => runs[read.op](read.spec, viewOf(read.spec, tenant, overlay), read.query as any)) as ReadResults<T>
        )
    )

  const collection = <A extends { readonly id: string }>(spec: CollectionSpec<A>): Collection<A> => {
    const rowOf = (tenant: TenantId, doc: A): Row => {
      const index: Record<string, IndexValue> = {}
      for (const [column, ix] of Object.entries(spec.indexes)) index[column] = ix.get(doc)
      // Every reader gets this value itself: read-only, as SQLite's parsed documents are.
      return { tenant, doc: deepFreeze(doc), index }
    }
    const read = <B>(f: (view: View) => B): Effect.Effect<B, never, Tenant> =>
      Effect.flatMap(Tenant, (tenant) => Effect.map(FiberRef.get(currentOverlay), (overlay) => f(viewOf(spec, tenant, overlay))))

    return {
      spec,
      get: (id) => read((view) => Option.map(Option.fromNullable(view.get(id)), (row) => row.doc as A)),
      insert: (doc) =>
        Effect.flatMap(
          read((view) => view.get(doc.id) !== undefined),
          (exists) =>
            exists
              ? Effect.fail(new StorageFailure({ detail: `${spec.name}: duplicate id ${doc.id}` }))
              : write((overlay, tenant) => {
                overlayOf(overlay, spec.name, tenantKey(tenant)).set(doc.id, rowOf(tenant, doc))
              })
        ),
      update: (doc) =>
        write((overlay, tenant) => {
          overlayOf(overlay, spec.name, tenantKey(tenant)).set(doc.id, rowOf(tenant, doc))
        }),
      remove: (id) =>
        write((overlay, tenant) => {
          overlayOf(overlay, spec.name, tenantKey(tenant)).set(id, DELETED)
        }),
      list: (query) => read((view) => runs.list(spec, view, query) as Array<A>),
      listIndexes: (query) => read((view) => runs.listIndexes(spec, view, query)),
      listColumns: (query) => read((view) => runs.listColumns(spec, view, query)),
      listAcrossTenants: (query) =>
        Effect.sync(() => {
          const tenants = [...(tables.get(spec.name)?.values() ?? [])]
          const everyTenant = function*(where: ReadonlyArray<Condition>) {
            for (const table of tenants) yield* candidates(spec, table, where)
          }
          return select(spec, everyTenant, query).map((row) => ({ tenant: row.tenant, doc: row.doc as A }))
        })
    }
  }

  const events: StorageService["events"] = {
    append: (event) =>
      write((overlay, tenant) => {
        overlay.events.push({ tenant, event })
      }),
    get: (id) =>
      Effect.map(Tenant, (tenant) => Option.map(Option.fromNullable(eventsById.get(eventKey(tenant, id))), (stored) => stored.event)),
    read: ({ after, limit, types }) =>
      Effect.map(Tenant, (tenant) => {
        const key = tenantKey(tenant)
        const result: Array<StoredEvent> = []
        for (let i = firstAfter(after); i < eventLog.length; i++) {
          if (result.length >= limit) break
          const stored = eventLog[i]!
          if (tenantKey(stored.tenant) !== key) continue
          if (types !== undefined && !types.includes(stored.event.type)) continue
          result.push(stored)
        }
        return result
      }),
    lastSeq: Effect.sync(() => lastSeq),
    readAcrossTenants: ({ after, limit }) =>
      Effect.sync(() => {
        const from = firstAfter(after)
        return eventLog.slice(from, from + limit)
      })
  }

  const eraseTenant = write((overlay, tenant) => {
    const key = tenantKey(tenant)
    overlay.erased.add(key)
    for (const byTenant of overlay.writes.values()) byTenant.delete(key)
    for (let i = overlay.events.length - 1; i >= 0; i--) {
      if (tenantKey(overlay.events[i]!.tenant) === key) overlay.events.splice(i, 1)
    }
  })

  return { collection, readMany, events, transaction, afterCommit, eraseTenant } satisfies StorageService
})

/** A fresh, empty in-memory store. */
export const MemoryStorageLive: Layer.Layer<Storage> = Layer.effect(Storage, makeMemoryStorage)
