/** Small pieces every resource's use cases share: lookups, timestamps, list pages, patches. */
import { Effect, Option, Schema } from "effect"
import { formatInstant } from "../domain/common.js"
import { NotFound, type StorageFailure, type ValidationFailed } from "../domain/errors.js"
import type { EventData, EventType } from "../events/catalogue.js"
import type { Tenant } from "../ports/tenant.js"
import { type IdKind, isWellFormedId, makeId } from "../domain/ids.js"
import type { Collection, Condition } from "../ports/storage.js"
import { decodeCursor, DEFAULT_LIMIT, Limit, type Page, pageOf } from "./pagination.js"

/** `not_found` for `id`, which is named only when it has an id's form (see `isWellFormedId`). */
export const noSuch = (label: string, id: string): NotFound =>
  new NotFound({ detail: isWellFormedId(id) ? `no ${label} with id ${id}` : `there is no ${label} with that id` })

/**
 * What `get` finds for `id`, or `not_found`. An id without an id's form names nothing, so it is
 * never looked up.
 */
export const findById =
  <A, E, R>(label: string, get: (id: string) => Effect.Effect<Option.Option<A>, E, R>) => (id: string): Effect.Effect<A, E | NotFound, R> =>
    isWellFormedId(id)
      ? Effect.flatMap(get(id), Option.match({ onNone: () => Effect.fail(noSuch(label, id)), onSome: Effect.succeed }))
      : Effect.fail(noSuch(label, id))

/** The resource or `not_found`; another tenant's id is indistinguishable from a missing one. */
export const findOr404 = <A extends { readonly id: string }>(collection: Collection<A>, label: string) => findById(label, collection.get)

/**
 * The reads visitors (publishable keys) get of a resource with an `active` flag: active ones
 * only (an inactive one is `not_found`, as if it did not exist), each as `view` shows it.
 */
export const visitorReads = <
  A extends { readonly id: string; readonly active: boolean },
  V,
  P extends { readonly active?: boolean },
  GetError,
  ListError,
  R
>(
  options: {
    readonly label: string
    readonly get: (id: string) => Effect.Effect<A, GetError, R>
    readonly list: (params: P) => Effect.Effect<Page<A>, ListError, R>
    readonly view: (resource: A) => V
  }
) => ({
  getForVisitor: (id: string): Effect.Effect<V, GetError | NotFound, R> =>
    Effect.flatMap(
      options.get(id),
      (found) =>
        found.active ? Effect.succeed(options.view(found)) : Effect.fail(new NotFound({ detail: `no ${options.label} with id ${id}` }))
    ),
  listForVisitor: (params: P): Effect.Effect<Page<V>, ListError, R> =>
    params.active === false
      ? Effect.succeed({ object: "list", data: [], has_more: false, next_cursor: null })
      : Effect.map(options.list({ ...params, active: true }), (page) => ({ ...page, data: page.data.map(options.view) }))
})

export interface Stamp {
  readonly ms: number
  readonly iso: string
}

const stampAt = (ms: number): Stamp => ({ ms, iso: formatInstant(ms) })

/** `next` of the clock read in place (one operation, not a read and a step): every write takes a stamp. */
export const withStamp = <A, E, R>(next: (now: Stamp) => Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.clockWith((clock) => next(stampAt(clock.unsafeCurrentTimeMillis())))

export const currentStamp: Effect.Effect<Stamp> = withStamp(Effect.succeed)

/** Id and timestamps of a resource created at `now`. */
export const resourceAt = <K extends IdKind>(kind: K, now: Stamp) => ({
  id: makeId(kind, now.ms),
  created_at: now.iso,
  updated_at: now.iso
})

/** Id and timestamps of a new resource. */
export const newResource = <K extends IdKind>(kind: K) =>
  Effect.clockWith((clock) => Effect.succeed(resourceAt(kind, stampAt(clock.unsafeCurrentTimeMillis()))))

export const PageParams = {
  limit: Schema.optionalWith(Limit, { exact: true }),
  cursor: Schema.optionalWith(
    Schema.String.pipe(Schema.maxLength(1000), Schema.annotations({ description: "the previous page's `next_cursor`" })),
    { exact: true }
  )
}

/** A list's `active` filter, as services and staff have it. */
export const activeFilter = (things: string) =>
  Schema.optionalWith(Schema.Boolean.annotations({ description: `only active (true) or inactive (false) ${things}` }), { exact: true })

/** One page of `collection` after the cursor, under `where`, bound to `filters`. */
export const listPage = <A extends { readonly id: string }>(
  collection: Collection<A>,
  options: {
    readonly where: ReadonlyArray<Condition>
    readonly limit: number | undefined
    readonly cursor: string | undefined
    readonly filters: unknown
  }
) =>
  Effect.gen(function*() {
    const limit = options.limit ?? DEFAULT_LIMIT
    const spec = collection.spec
    const shape = [...spec.order.map((column) => spec.indexes[column]!.type), "text" as const]
    const after = yield* decodeCursor(options.cursor, options.filters, shape)
    const rows = yield* collection.list({
      where: options.where,
      limit: limit + 1,
      ...(after !== undefined ? { after } : {})
    })
    return pageOf(rows, limit, (row) => [...spec.order.map((column) => spec.indexes[column]!.get(row)), row.id], options.filters)
  })

/** Whether applying `patch` to `current` changes anything. */
export const changes = <A extends object>(current: A, patch: Partial<A>): boolean =>
  Object.entries(patch).some(([key, value]) => JSON.stringify((current as Record<string, unknown>)[key]) !== JSON.stringify(value))

/** The parts of `Events` a change needs; a structural type keeps this module below Events.ts. */
export interface ChangeRecorder {
  readonly mutate: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E | StorageFailure, R>
  readonly record: (type: EventType, object: unknown, extra?: Omit<EventData, "object">) => Effect.Effect<unknown, StorageFailure, Tenant>
}

/**
 * PATCH for a resource: apply the fields, validate the whole result, store it and record
 * `<type>` with the previous version, in one change. A patch that changes nothing is a
 * no-op (no new `updated_at`, no event). `prepare` may check or rewrite fields first.
 */
export const patchResource = <A extends { readonly id: string; readonly updated_at: string }, P extends Partial<A>, E = never, R = never>(
  options: {
    readonly events: ChangeRecorder
    readonly collection: Collection<A>
    readonly find: (id: string) => Effect.Effect<A, NotFound | StorageFailure, Tenant>
    readonly validate: (merged: unknown) => Effect.Effect<A, ValidationFailed>
    readonly type: EventType
    readonly prepare?: (current: A, patch: P) => Effect.Effect<P, E, R>
  }
) =>
(id: string, patch: P) =>
  options.events.mutate(Effect.gen(function*() {
    const current = yield* options.find(id)
    if (!changes(current, patch)) return current
    const fields = options.prepare === undefined ? patch : yield* options.prepare(current, patch)
    const next = yield* options.validate({ ...current, ...fields, updated_at: (yield* currentStamp).iso })
    yield* options.collection.update(next)
    yield* options.events.record(options.type, next, { previous: current })
    return next
  }))
