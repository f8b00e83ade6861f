/**
 * The event log's use cases: recording an event inside a change's transaction (the outbox),
 * reading the feed by cursor, and delivering committed events to in-process subscribers.
 * Subscribers hear of an event only after its transaction committed, in commit order.
 */
import { Chunk, Clock, Context, Effect, PubSub, Schema, Stream } from "effect"
import { formatInstant } from "../domain/common.js"
import { BadRequest, type StorageFailure } from "../domain/errors.js"
import { makeId } from "../domain/ids.js"
import { type Event, type EventData, EventType } from "./catalogue.js"
import { decodeCursor, encodeCursor, Limit, type Page } from "../internal/pagination.js"
import { findById } from "../internal/resources.js"
import { decodeInput } from "../domain/validation.js"
import { Storage } from "../ports/storage.js"
import { Tenant, type TenantId } from "../ports/tenant.js"

/** A feed cursor's key: the sequence number of the last event seen. */
const FEED_KEY = ["integer"] as const

export interface CommittedEvent {
  readonly tenant: TenantId
  readonly event: Event
}

export type EventListener = (event: Event, tenant: TenantId) => void

/**
 * The feed's filters. `types` names catalogue types only: a filter that could match nothing
 * (a typo) is refused rather than answered with an empty feed forever.
 */
export const EventListParams = Schema.Struct({
  after: Schema.optionalWith(Schema.String, { exact: true }).annotations({
    description: "the `next_cursor` of the previous page: events committed after it"
  }),
  types: Schema.optionalWith(
    Schema.Array(EventType.annotations({
      message: () => ({ message: "must be an event type of the catalogue", override: true })
    })).pipe(Schema.maxItems(50)),
    { exact: true }
  ),
  limit: Schema.optionalWith(Limit, { exact: true })
}).annotations({ identifier: "EventListParams" })
export type EventListParams = typeof EventListParams.Encoded

const NO_EXTRA: Omit<EventData, "object"> = {}

/** How often a live stream looks for events that other processes committed. */
const POLL_INTERVAL = "1 second"

export class Events extends Effect.Service<Events>()("slotwise/Events", {
  effect: Effect.gen(function*() {
    const storage = yield* Storage
    const committed = yield* PubSub.unbounded<CommittedEvent>()
    const listeners = new Set<EventListener>()

    const publish = (stored: CommittedEvent) =>
      Effect.suspend(() => {
        for (const listener of listeners) {
          try {
            listener(stored.event, stored.tenant)
          } catch {
            // A subscriber's bug must not undo or block a committed change.
          }
        }
        return PubSub.publish(committed, stored)
      })

    /**
     * Runs a change as one transaction: the events it records are appended in that same
     * transaction and published only after it commits. Nested calls join the outer change.
     */
    const mutate = storage.transaction

    /** Appends an event for `object` to the log of the current tenant, inside the open change. */
    const record = (
      type: EventType,
      object: unknown,
      extra: Omit<EventData, "object"> = NO_EXTRA
    ): Effect.Effect<Event, StorageFailure, Tenant> =>
      appendFor(type, object, extra, undefined) as Effect.Effect<Event, StorageFailure, Tenant>

    /** `record`, answering `value` (not undefined) instead of the event: a change that ends with its event. */
    const recordAs = <A>(type: EventType, object: unknown, value: A): Effect.Effect<A, StorageFailure, Tenant> =>
      appendFor(type, object, NO_EXTRA, value) as Effect.Effect<A, StorageFailure, Tenant>

    /** The event appended, answering `value`, or the event itself when `value` is undefined. */
    const appendFor = (
      type: EventType,
      object: unknown,
      extra: Omit<EventData, "object">,
      value: unknown
    ): Effect.Effect<unknown, StorageFailure, Tenant> =>
      // Chained, not a generator, with the tenant and the clock read in one step: every change runs this.
      Effect.withFiberRuntime((fiber) => {
        const tenant = Context.unsafeGet(fiber.currentContext as Context.Context<Tenant>, Tenant)
        const now = Context.get(fiber.currentDefaultServices, Clock.Clock).unsafeCurrentTimeMillis()
        const event: Event = {
          id: makeId("event", now),
          object: "event",
          type,
          created_at: formatInstant(now),
          data: extra === NO_EXTRA ? { object } : { object, ...extra }
        }
        return Effect.zipRight(
          storage.events.append(event),
          Effect.as(storage.afterCommit(publish({ tenant, event })), value === undefined ? event : value)
        )
      })

    const decodeParams = decodeInput(EventListParams)

    /**
     * The feed, oldest first. `next_cursor` is always set (to where this page ended), so a
     * poller that stores it and asks again never misses or repeats an event.
     */
    const list = (params: EventListParams = {}) =>
      Effect.gen(function*() {
        const { after, limit = 20, types } = yield* decodeParams(params)
        const filters = { types: types ?? null }
        // The feed's cursor parameter is `after`: name it so in the error.
        const key = yield* decodeCursor(after, filters, FEED_KEY).pipe(
          Effect.mapError((e) =>
            new BadRequest({
              detail: e.detail.replace(/^cursor/, "after"),
              errors: e.errors.map((error) => ({ ...error, path: "after" }))
            })
          )
        )
        const from = typeof key?.[0] === "number" ? key[0] : 0
        const rows = yield* storage.events.read({
          after: from,
          limit: limit + 1,
          ...(types !== undefined ? { types } : {})
        })
        const data = rows.slice(0, limit)
        const last = data.length > 0 ? data[data.length - 1]!.seq : from
        return {
          object: "list",
          data: data.map((row) => row.event),
          has_more: rows.length > limit,
          next_cursor: encodeCursor([last], filters)
        } satisfies Page<Event>
      })

    const get = findById("event", storage.events.get)

    /**
     * A live stream of the tenant's events from now on (or after a feed cursor), read from
     * the log itself so it is complete and in commit order even when other processes write.
     */
    const stream = (options: { readonly after?: string; readonly types?: ReadonlyArray<string> } = {}) =>
      Stream.unwrapScoped(Effect.gen(function*() {
        const wake = yield* PubSub.subscribe(committed)
        const filters = { types: options.types ?? null }
        const key = yield* decodeCursor(options.after, filters, FEED_KEY)
        let cursor = typeof key?.[0] === "number" ? key[0] : yield* storage.events.lastSeq
        const next = Effect.gen(function*() {
          for (;;) {
            const batch = yield* storage.events.read({
              after: cursor,
              limit: 100,
              ...(options.types !== undefined ? { types: options.types } : {})
            })
            if (batch.length > 0) {
              cursor = batch[batch.length - 1]!.seq
              return Chunk.fromIterable(batch.map((row) => row.event))
            }
            yield* Effect.raceFirst(wake.take, Effect.sleep(POLL_INTERVAL))
            yield* wake.takeAll
          }
        })
        return Stream.repeatEffectChunk(next)
      }))

    /** Calls `listener` synchronously after each commit in this process; returns the unsubscribe. */
    const subscribe = (listener: EventListener): () => void => {
      listeners.add(listener)
      return () => {
        listeners.delete(listener)
      }
    }

    return { mutate, record, recordAs, list, get, stream, subscribe, committed } as const
  })
}) {}
