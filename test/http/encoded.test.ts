import { HttpServerResponse } from "@effect/platform"
import { Arbitrary, Effect, Either, FastCheck, Schema } from "effect"
import { describe, expect, it } from "vitest"
import { BookingCreated, PublicBookingCreated } from "../../adapters/http/contract/bookings.js"
import { encodedAs, transforms } from "../../adapters/http/handlers/encoded.js"
import { Booking } from "../../src/domain/booking.js"
import { Instant } from "../../src/domain/common.js"

/** The body `encodedAs(member)` answers `value` with. */
const bodyOf = <A, I>(member: Schema.Schema<A, I>, value: A) =>
  Effect.runSync(Effect.map(encodedAs(member)(value), (response) => {
    const body = (response as HttpServerResponse.HttpServerResponse).body
    return body._tag === "Uint8Array" ? JSON.parse(new TextDecoder().decode(body.body)) : body
  }))

describe("encodedAs", () => {
  it("knows which answers encode by checks alone", () => {
    expect(transforms(BookingCreated.ast)).toBe(false)
    expect(transforms(PublicBookingCreated.ast)).toBe(false)
    expect(transforms(Instant.ast)).toBe(false)
    // A transformation not marked as encoding unchanged, at any depth, or what could hide one.
    expect(transforms(Schema.Struct({ at: Schema.Date }).ast)).toBe(true)
    expect(transforms(Schema.Array(Schema.NumberFromString).ast)).toBe(true)
    expect(transforms(Schema.Struct({ a: Schema.Union(Schema.Null, Schema.Trim) }).ast)).toBe(true)
    expect(transforms(Schema.suspend(() => Schema.String).ast)).toBe(true)
  })

  it("answers every booking as the schema's full encoding does", () => {
    const full = Schema.encodeSync(BookingCreated)
    FastCheck.assert(
      FastCheck.property(Arbitrary.make(Booking), (booking) => {
        expect(bodyOf(BookingCreated, booking)).toEqual(JSON.parse(JSON.stringify(full(booking))))
      }),
      { numRuns: 200 }
    )
  })

  it("drops fields the answer does not declare, and refuses a value of the wrong shape", () => {
    const booking = FastCheck.sample(Arbitrary.make(Booking), 1)[0]!
    const body = bodyOf(PublicBookingCreated, { ...booking, secret_note: "internal" } as never)
    expect(body).not.toHaveProperty("secret_note")
    expect(body).not.toHaveProperty("client_id")
    const wrong = Effect.runSync(Effect.either(encodedAs(BookingCreated)({ ...booking, start: 42 } as never)))
    expect(Either.isLeft(wrong)).toBe(true)
  })
})
