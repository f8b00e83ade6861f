/**
 * The Effect API: core services composed over a storage layer, the tenant as a service in
 * context, typed failures, and the live event stream, on a real SQLite file; every name
 * taken from the package's namespaces, as docs/library.md shows.
 */
import { describe, expect, expectTypeOf, it } from "@effect/vitest"
import { Chunk, Effect, Either, Fiber, Layer, Stream } from "effect"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Bookings, Clients, Events, Layers, Services, SqliteStorageLive, Staff, Storage } from "../../index.js"

const tenant = Layer.succeed(Storage.Tenant, { account_id: "acc_01J00000000000000000000000", environment: "sandbox" })

describe("Effect API", () => {
  it("booking creation names every failure in its type, a visitor's daily limit too (checked by tsc)", () => {
    type CreateFailure = Effect.Effect.Error<ReturnType<Bookings.Bookings["create"]>>
    expectTypeOf<CreateFailure["_tag"]>().toEqualTypeOf<
      "ValidationFailed" | "InvalidReference" | "SlotUnavailable" | "OutsideAvailability" | "HoldExpired" | "RateLimited" | "StorageFailure"
    >()
  })

  it.scopedLive("runs use cases over SQLite with the tenant in context and typed errors", () =>
    Effect.gen(function*() {
      const dir = mkdtempSync(join(tmpdir(), "slotwise-effect-"))
      yield* Effect.addFinalizer(() => Effect.sync(() => rmSync(dir, { recursive: true, force: true })))
      const program = Effect.gen(function*() {
        const events = yield* Events.Events
        // Start the stream where the feed is now, so it neither misses nor replays anything.
        const { next_cursor } = yield* events.list()
        const received = yield* events.stream({ after: next_cursor }).pipe(Stream.take(2), Stream.runCollect, Effect.fork)
        const staff = yield* (yield* Staff.Staff).create({ name: "Eve", time_zone: "UTC" })
        const service = yield* (yield* Services.Services).create({ name: "Call", duration_minutes: 20, staff_ids: [staff.id] })
        const streamed = Chunk.toReadonlyArray(yield* Fiber.join(received))
        expect(streamed.map((e) => e.type)).toEqual(["staff.created", "service.created"])
        const client = yield* (yield* Clients.Clients).create({ name: "Al" })
        const refused = yield* Effect.either(
          (yield* Bookings.Bookings).create({
            service_id: service.id,
            staff_id: staff.id,
            client_id: client.id,
            start: "2030-01-01T10:00:00Z"
          })
        )
        expect(Either.isLeft(refused) && refused.left._tag).toBe("OutsideAvailability")
        const missing = yield* Effect.either((yield* Bookings.Bookings).get("bkg_00000000000000000000000000"))
        expect(Either.isLeft(missing) && missing.left._tag).toBe("NotFound")
      })
      yield* program.pipe(
        Effect.provide(Layers.CoreLive.pipe(Layer.provide(SqliteStorageLive({ filename: join(dir, "effect.db") })))),
        Effect.provide(tenant)
      )
    }))
})
