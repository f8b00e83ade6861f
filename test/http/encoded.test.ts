import { HttpApi, HttpApiBuilder, HttpApiEndpoint, HttpApiGroup, HttpServer, HttpServerResponse } from "@effect/platform"
import { Arbitrary, Effect, Either, FastCheck, Layer, Schema } from "effect"
import { describe, expect, it } from "vitest"
import { BookingCreated, PublicBookingCreated } from "../../adapters/http/contract/bookings.js"
import { encodedAs, encodedHandlers, transforms } from "../../adapters/http/handlers/encoded.js"
import { Booking } from "../../src/bookings/booking.js"
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

describe("encodedHandlers", () => {
  // One API served twice: with the platform's own encoding, and with each handler's answer
  // encoded by its endpoint's one success member. Every endpoint must answer alike.
  const Item = Schema.Struct({ id: Schema.String, tags: Schema.Array(Schema.String) })
  const Named = Schema.Struct({ name: Schema.String.pipe(Schema.minLength(3)) })
  const Api = HttpApi.make("t").add(
    HttpApiGroup.make("g")
      .add(HttpApiEndpoint.get("one", "/one").addSuccess(Item))
      .add(HttpApiEndpoint.post("made", "/made").addSuccess(Item, { status: 201 }))
      .add(HttpApiEndpoint.get("either", "/either").addSuccess(Item).addSuccess(Named, { status: 202 }))
      .add(HttpApiEndpoint.del("gone", "/gone").addSuccess(Schema.Void))
      .add(HttpApiEndpoint.get("raw", "/raw").addSuccess(Item))
      .add(HttpApiEndpoint.get("short", "/short").addSuccess(Named))
  )
  const item = { id: "i_1", tags: ["a", "b"], undeclared: true }
  const serve = (encode: boolean) => {
    const Handlers = HttpApiBuilder.group(Api, "g", (handlers) => {
      const made = handlers
        .handle("one", () => Effect.succeed(item))
        .handle("made", () => Effect.succeed(item))
        .handle("either", () => Effect.succeed({ name: "Ann" }))
        .handle("gone", () => Effect.void)
        .handleRaw("raw", () => Effect.succeed(HttpServerResponse.text("as it is", { status: 203 })))
        .handle("short", () => Effect.succeed({ name: "Al" }))
      return encode ? encodedHandlers(handlers, made) : made
    })
    return HttpApiBuilder.toWebHandler(
      Layer.mergeAll(HttpApiBuilder.api(Api).pipe(Layer.provide(Handlers)), HttpServer.layerContext)
    )
  }
  const answer = async (handler: ReturnType<typeof serve>, method: string, path: string) => {
    const response = await handler.handler(new Request(`http://x${path}`, { method }))
    return { status: response.status, type: response.headers.get("content-type"), body: await response.text() }
  }

  it("answers every endpoint with the status, content type and body the platform would", async () => {
    const platform = serve(false)
    const encoded = serve(true)
    try {
      for (const [method, path] of [["GET", "/one"], ["POST", "/made"], ["GET", "/either"], ["DELETE", "/gone"], ["GET", "/raw"]]) {
        expect(await answer(encoded, method!, path!)).toEqual(await answer(platform, method!, path!))
      }
      expect(await answer(encoded, "GET", "/one")).toEqual({
        status: 200,
        type: "application/json",
        body: JSON.stringify({ id: "i_1", tags: ["a", "b"] })
      })
      expect((await answer(encoded, "POST", "/made")).status).toBe(201)
      expect((await answer(encoded, "DELETE", "/gone")).status).toBe(204)
    } finally {
      await platform.dispose()
      await encoded.dispose()
    }
  })

  it("encodes a one-member answer with its encoded side: shapes checked, refinements not run again", async () => {
    const platform = serve(false)
    const encoded = serve(true)
    try {
      // The platform runs `minLength(3)` again on a value the handler built (and refuses it as
      // its decode error); the encoder checks its shape only.
      expect((await answer(platform, "GET", "/short")).status).toBe(400)
      expect(await answer(encoded, "GET", "/short")).toEqual({
        status: 200,
        type: "application/json",
        body: JSON.stringify({ name: "Al" })
      })
    } finally {
      await platform.dispose()
      await encoded.dispose()
    }
  })
})
