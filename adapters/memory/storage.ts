/**
 * In-memory storage. A write transaction collects its writes and events in an overlay held
 * in a FiberRef and applies them in one synchronous step at commit, under a one-permit
 * semaphore: readers never see half a transaction, and a failed one leaves nothing behind.
 */
import { Effect, FiberRef, Layer, Option } from "effect"
import { StorageFailure } from "../../src/domain/errors.js"
import { deepFreeze } from "../../src/internal/frozen.js"
import type { Event } from "../../src/events/catalogue.js"
import {
  type Collection,
  type CollectionRead,
  type CollectionSpec,
  type ColumnsQuery,
  type ColumnValues,
  type Condition,
  type IndexedRow,
  type IndexValue,
  type ListQuery,
  type ReadResults,
  Storage,
  type StorageService,
  type StoredEvent
} from "../../src/ports/storage.js"
import { Tenant, type TenantId } from "../../src/ports/tenant.js"

interface Row {
  readonly tenant: TenantId
  readonly doc: { readonly id: string }
  readonly index: Readonly<Record<string, IndexValue>>
}

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

const compareValues = (a: IndexValue, b: IndexValue): number =>
  a === b ? 0 : a === null ? -1 : b === null ? 1 : a < b ? -1 : 1

const valueOf = (row: Row, column: string): IndexValue => column === "id" ? row.doc.id : (row.index[column] ?? null)

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
  /** collection → tenant key → id → row */
  const tables = new Map<string, Map<string, Map<string, Row>>>()
  const eventLog: Array<StoredEvent> = []
  let lastSeq = 0

  const tableOf = (name: string, key: string): Map<string, Row> => {
    let byTenant = tables.get(name)
    if (byTenant === undefined) tables.set(name, byTenant = new Map())
    let rows = byTenant.get(key)
    if (rows === undefined) byTenant.set(key, rows = new Map())
    return rows
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
      for (let i = eventLog.length - 1; i >= 0; i--) {
        if (tenantKey(eventLog[i]!.tenant) === key) eventLog.splice(i, 1)
      }
    }
    for (const [name, byTenant] of overlay.writes) {
      for (const [key, rows] of byTenant) {
        const table = tableOf(name, key)
        for (const [id, row] of rows) {
          if (row === DELETED) table.delete(id)
          else table.set(id, row)
        }
      }
    }
    for (const { event, tenant } of overlay.events) eventLog.push({ seq: ++lastSeq, tenant, event })
  }

  const transaction = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E | StorageFailure, R> =>
    Effect.flatMap(FiberRef.get(currentOverlay), (open) => {
      if (open !== undefined) return effect
      const overlay: Overlay = { writes: new Map(), events: [], erased: new Set(), afterCommit: [] }
      return lock.withPermits(1)(
        Effect.locally(effect, currentOverlay, overlay).pipe(Effect.tap(() => Effect.sync(() => commit(overlay))))
      ).pipe(Effect.tap(() => Effect.forEach(overlay.afterCommit, (after) => after, { discard: true })))
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
      Effect.flatMap(Tenant, (tenant) =>
        Effect.flatMap(FiberRef.get(currentOverlay), (overlay) => Effect.sync(() => f(overlay!, tenant))))
    )

  /** The fiber's view of one collection of its tenant: committed rows plus its own overlay. */
  interface View {
    readonly get: (id: string) => Row | undefined
    readonly rows: () => Iterable<Row>
  }
  const viewOf = (name: string, tenant: TenantId, overlay: Overlay | undefined): View => {
    const key = tenantKey(tenant)
    const base = overlay?.erased.has(key) ? new Map<string, Row>() : tableOf(name, key)
    const pending = overlay?.writes.get(name)?.get(key)
    if (pending === undefined || pending.size === 0) return { get: (id) => base.get(id), rows: () => base.values() }
    return {
      get: (id) => {
        const row = pending.get(id)
        return row === DELETED ? undefined : row ?? base.get(id)
      },
      // Merged lazily: a transaction's reads must not copy the whole table.
      rows: function*() {
        for (const [id, row] of base) if (!pending.has(id)) yield row
        for (const row of pending.values()) if (row !== DELETED) yield row
      }
    }
  }

  const select = (spec: CollectionSpec<any>, rows: Iterable<Row>, query: ListQuery): Array<Row> => {
    const where = query.where ?? []
    const after = query.after
    // Each row's sort key is built once, not once per comparison.
    const keyed: Array<{ readonly row: Row; readonly key: Array<IndexValue> }> = []
    for (const row of rows) {
      if (!matches(row, where)) continue
      const key = sortKey(spec, row)
      if (after !== undefined && compareKeys(key, after) <= 0) continue
      keyed.push({ row, key })
    }
    keyed.sort((a, b) => compareKeys(a.key, b.key))
    const limited = query.limit === undefined ? keyed : keyed.slice(0, query.limit)
    return limited.map((entry) => entry.row)
  }

  /** The reads of a collection's view, one function each for the collection and `readMany`. */
  const runs = {
    list: (spec: CollectionSpec<any>, view: View, query: ListQuery) => select(spec, view.rows(), query).map((row) => row.doc),
    listIndexes: (spec: CollectionSpec<any>, view: View, query: ListQuery): Array<IndexedRow> =>
      select(spec, view.rows(), query).map((row) => ({ ...row.index, id: row.doc.id })),
    listColumns: (_spec: CollectionSpec<any>, view: View, { columns, groupBy, where = [] }: ColumnsQuery) => {
      const groups = new Map<IndexValue, Array<Array<IndexValue>>>()
      for (const row of view.rows()) {
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
    Effect.flatMap(Tenant, (tenant) =>
      Effect.map(FiberRef.get(currentOverlay), (overlay) =>
        reads.map((read) => runs[read.op](read.spec, viewOf(read.spec.name, tenant, overlay), read.query as any)) as ReadResults<T>))

  const collection = <A extends { readonly id: string }>(spec: CollectionSpec<A>): Collection<A> => {
    const rowOf = (tenant: TenantId, doc: A): Row => {
      const index: Record<string, IndexValue> = {}
      for (const [column, ix] of Object.entries(spec.indexes)) index[column] = ix.get(doc)
      // Every reader gets this value itself: read-only, as SQLite's parsed documents are.
      return { tenant, doc: deepFreeze(doc), index }
    }
    const read = <B>(f: (view: View) => B): Effect.Effect<B, never, Tenant> =>
      Effect.flatMap(Tenant, (tenant) =>
        Effect.map(FiberRef.get(currentOverlay), (overlay) => f(viewOf(spec.name, tenant, overlay))))

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
          const all: Array<Row> = []
          for (const rows of tables.get(spec.name)?.values() ?? []) all.push(...rows.values())
          return select(spec, all, query).map((row) => ({ tenant: row.tenant, doc: row.doc as A }))
        })
    }
  }

  const events: StorageService["events"] = {
    append: (event) =>
      write((overlay, tenant) => {
        overlay.events.push({ tenant, event })
      }),
    get: (id) =>
      Effect.map(Tenant, (tenant) => {
        const key = tenantKey(tenant)
        return Option.fromNullable(
          eventLog.find((stored) => stored.event.id === id && tenantKey(stored.tenant) === key)?.event
        )
      }),
    read: ({ after, limit, types }) =>
      Effect.map(Tenant, (tenant) => {
        const key = tenantKey(tenant)
        const result: Array<StoredEvent> = []
        for (const stored of eventLog) {
          if (result.length >= limit) break
          if (stored.seq <= after || tenantKey(stored.tenant) !== key) continue
          if (types !== undefined && !types.includes(stored.event.type)) continue
          result.push(stored)
        }
        return result
      }),
    lastSeq: Effect.sync(() => lastSeq),
    readAcrossTenants: ({ after, limit }) =>
      Effect.sync(() => eventLog.filter((stored) => stored.seq > after).slice(0, limit))
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
