/**
 * The sandbox's triggers (docs/api.md §4 Sandbox): emit any event type on demand — about a real
 * resource of the tenant, or a realistic sample — to every subscriber (feed, webhooks,
 * in-process listeners), and erase the sandbox's data. Production tenants are refused.
 */
import { Effect, Option, Schema } from "effect"
import { ApiKeysCollection } from "../auth/collections.js"
import { CalendarFeedsCollection } from "../calendarFeeds/CalendarFeeds.js"
import { CalendarsCollection } from "../calendars/collections.js"
import { toCalendar } from "../calendars/calendar.js"
import { feedOf } from "../calendarFeeds/calendarFeed.js"
import { Forbidden, NotFound } from "../domain/errors.js"
import { DomainsCollection } from "../domains/Domains.js"
import { IdPrefixes } from "../domain/ids.js"
import { Events } from "../events/Events.js"
import { type EventData, EventType } from "../events/catalogue.js"
import { kindOfEventType, type SampleKind, sampleEventData } from "../events/samples.js"
import { currentStamp, findOr404 } from "../internal/resources.js"
import { decodeInput, validationFailed } from "../domain/validation.js"
import { AvailabilityCollection } from "../availability/collections.js"
import { BookingsCollection } from "../bookings/collections.js"
import { ClientsCollection } from "../clients/collections.js"
import { PaymentsCollection } from "../payments/collections.js"
import { ServicesCollection } from "../services/collections.js"
import { StaffCollection } from "../staff/collections.js"
import { type Collection, Storage } from "../ports/storage.js"
import { Tenant } from "../ports/tenant.js"
import { ReminderSettingsCollection } from "../reminders/Reminders.js"

export const SandboxEmit = Schema.Struct({
  type: EventType.annotations({
    message: () => ({ message: "must be an event type of the catalogue", override: true })
  }),
  object_id: Schema.optionalWith(Schema.String.pipe(Schema.maxLength(64)), { exact: true }).annotations({
    description: "a resource of this sandbox the event is about (of the type's kind); a sample when absent"
  })
}).annotations({ identifier: "SandboxEmit", description: "An event to emit in the sandbox, to test a webhook receiver." })
export type SandboxEmit = typeof SandboxEmit.Type

/** Types whose real events carry the resource before the change as `previous`. */
const WITH_PREVIOUS = /\.(updated|cancelled|rescheduled|rotated|verified)$/

export class Sandbox extends Effect.Service<Sandbox>()("slotwise/Sandbox", {
  effect: Effect.gen(function*() {
    const storage = yield* Storage
    const events = yield* Events
    const decodeEmit = decodeInput(SandboxEmit)
    const bookings = storage.collection(BookingsCollection)
    const collections: { readonly [K in Exclude<SampleKind, "calendar_feed">]: Collection<any> } = {
      booking: bookings,
      payment: storage.collection(PaymentsCollection),
      client: storage.collection(ClientsCollection),
      service: storage.collection(ServicesCollection),
      staff: storage.collection(StaffCollection),
      availability: storage.collection(AvailabilityCollection),
      calendar: storage.collection(CalendarsCollection),
      domain: storage.collection(DomainsCollection)
    }
    const feeds = storage.collection(CalendarFeedsCollection)

    const sandboxOnly = Effect.flatMap(Tenant, (tenant) =>
      tenant.environment === "sandbox"
        ? Effect.void
        : Effect.fail(new Forbidden({ detail: "sandbox triggers are not available with a production credential" })))

    /** A staff member's calendar feed as its events show it (never its token's hash). */
    const feedData = (type: EventType, staffId: string) =>
      Effect.gen(function*() {
        const prefix = `${IdPrefixes.staff}_`
        if (!staffId.startsWith(prefix)) {
          return yield* validationFailed([{ path: "object_id", message: `must be a staff id (${prefix}…) whose feed ${type} is about` }])
        }
        const feed = yield* feeds.get(staffId)
        if (Option.isNone(feed)) return yield* new NotFound({ detail: `staff member ${staffId} has no calendar feed` })
        const object = feedOf(feed.value)
        return { object, ...(WITH_PREVIOUS.test(type) ? { previous: object } : {}) } satisfies EventData
      })

    /** The event's data for a real resource: the resource, and for a payment its booking. */
    const realData = (kind: SampleKind, type: EventType, objectId: string) =>
      Effect.gen(function*() {
        if (kind === "calendar_feed") return yield* feedData(type, objectId)
        const prefix = `${IdPrefixes[kind]}_`
        if (!objectId.startsWith(prefix)) {
          return yield* validationFailed([{ path: "object_id", message: `must be an id starting with ${prefix} for ${type}` }])
        }
        const found = yield* findOr404(collections[kind], kind)(objectId)
        // A calendar's stored document holds its secret address: events show its public view.
        const object = kind === "calendar" ? toCalendar(found) : found
        if (kind === "payment") {
          const booking = yield* bookings.get(object.booking_id)
          return { object, ...(Option.isSome(booking) ? { booking: booking.value } : {}) } satisfies EventData
        }
        if (type === "booking.reminder") return { object, offset_minutes: 60, late: false } satisfies EventData
        return { object, ...(WITH_PREVIOUS.test(type) ? { previous: object } : {}) } satisfies EventData
      })

    /**
     * Emits `type` now, exactly as a real change would (same log, same subscribers), about
     * `object_id` when given, else about a sample. Returns the event.
     */
    const emit = (input: typeof SandboxEmit.Encoded) =>
      Effect.gen(function*() {
        yield* sandboxOnly
        const { object_id, type } = yield* decodeEmit(input)
        const data = object_id === undefined
          ? sampleEventData(type, (yield* currentStamp).ms)
          : yield* realData(kindOfEventType(type), type, object_id)
        const { object, ...extra } = data
        return yield* events.mutate(events.record(type, object, extra))
      })

    const apiKeys = storage.collection(ApiKeysCollection)
    const reminderSettings = storage.collection(ReminderSettingsCollection)

    /**
     * Erases every resource, event, webhook endpoint and delivery of this sandbox, in one
     * transaction. Its API keys and its copy of the account's reminder
     * settings stay (credentials and account settings, not data): the key that asked
     * for the reset keeps working.
     */
    const reset = () =>
      Effect.gen(function*() {
        yield* sandboxOnly
        yield* storage.transaction(Effect.gen(function*() {
          const keys = yield* apiKeys.list({})
          const settings = yield* reminderSettings.list({})
          yield* storage.eraseTenant
          for (const key of keys) yield* apiKeys.insert(key)
          for (const kept of settings) yield* reminderSettings.insert(kept)
        }))
      })

    return { emit, reset } as const
  })
}) {}
