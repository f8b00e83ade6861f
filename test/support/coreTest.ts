/**
 * `CoreTest`: every core use case over a fresh in-memory store, acting for the default
 * account's sandbox, on a `TestClock` that reads `NOW` until a test moves it. It lives here
 * and not in `src/testing/` because the in-memory storage is an adapter (`adapters/memory`)
 * and the core imports only `effect`.
 *
 * A layer is built anew each time it is provided, so `it.effect(..., () => effect.pipe(
 * Effect.provide(CoreTest)))` gives every test a store of its own; `layer(CoreTest)(it => …)`
 * shares one store across a block (only for tests that read what the block set up).
 */
import { Effect, Layer } from "effect"
import { MemoryStorageLive } from "../../adapters/memory/storage.js"
import { DEFAULT_TENANT, toSlotwiseError } from "../../library.js"
import { Availability } from "../../src/availability/Availability.js"
import { Bookings } from "../../src/bookings/Bookings.js"
import { Clients } from "../../src/clients/Clients.js"
import { Events } from "../../src/events/Events.js"
import { CoreLive } from "../../src/layers.js"
import { Tenant, type TenantId } from "../../src/ports/tenant.js"
import { Services } from "../../src/services/Services.js"
import { Staff } from "../../src/staff/Staff.js"
import { TestClockAt } from "../../src/testing/testClock.js"
import type { SlotwiseFailure } from "../../src/domain/errors.js"
import { fieldsOf, NOW } from "./fixtures.js"

/** The core over a fresh in-memory store for `tenant`, its clock reading `startMs`; `Storage` and `Tenant` stay reachable. */
export const coreTestLayer = (startMs: number, tenant: TenantId = DEFAULT_TENANT) =>
  CoreLive.pipe(
    Layer.provideMerge(MemoryStorageLive),
    Layer.provideMerge(Layer.succeed(Tenant, tenant)),
    Layer.provideMerge(TestClockAt(startMs))
  )

/** The core for the default account's sandbox at `NOW` (Friday 2027-03-26 09:00 Berlin). */
export const CoreTest = coreTestLayer(Date.parse(NOW))

/** The services `CoreTest` provides, for helpers that run inside it. */
export type CoreTestServices = Layer.Layer.Success<typeof CoreTest>

/** The use cases by the names the library gives them (`s.bookings.create(...)`), to read in a test as `const s = yield* core`. */
export const core = Effect.all({
  services: Services,
  staff: Staff,
  clients: Clients,
  availability: Availability,
  bookings: Bookings,
  events: Events
})

/** A salon in the current store: a stylist working weekdays 09:00–17:00 in Berlin, a 30-minute haircut at 40 EUR, a client. */
export const salonIn = (service: Record<string, unknown> = {}) =>
  Effect.gen(function*() {
    const staff = yield* (yield* Staff).create({ name: "Ana", time_zone: "Europe/Berlin" })
    yield* (yield* Availability).create({
      staff_id: staff.id,
      type: "weekly",
      weekdays: [1, 2, 3, 4, 5],
      start_time: "09:00",
      end_time: "17:00"
    })
    const haircut = yield* (yield* Services).create({
      name: "Haircut",
      duration_minutes: 30,
      staff_ids: [staff.id],
      price: { amount: 4000, currency: "EUR" },
      ...service
    } as never)
    const client = yield* (yield* Clients).create({ name: "Bo", email: "bo@example.com" })
    return { staffId: staff.id, serviceId: haircut.id, clientId: client.id }
  })

/** How `effect` is refused, as the library reports it (the fields `failure` gives: `code`, `status`, `errors`, `name`, …); fails the test if it succeeds. */
export const refusal = <A, E extends SlotwiseFailure, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.map(Effect.flip(effect), (refused) => fieldsOf(toSlotwiseError(refused)))
