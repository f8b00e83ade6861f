import { Effect, Either, Schema } from "effect"
import { describe, expect, it } from "vitest"
import { decodeInput, inputDecoder } from "../../src/domain/validation.js"

/** A schema that counts how often its check runs. */
const counted = () => {
  const runs = { n: 0 }
  const schema = Schema.Struct({
    name: Schema.String.pipe(Schema.filter((s) => {
      runs.n++
      return s.length > 0 || "must not be empty"
    })),
    starts_at: Schema.NumberFromString
  })
  return { schema, runs }
}

describe("an input is decoded once", () => {
  it("a use case's decoder takes a value another decoder of the same schema made, without checking it again", () => {
    const { runs, schema } = counted()
    const beforeRouting = inputDecoder(schema)
    const made = Either.getOrThrow(beforeRouting({ name: "Ana", starts_at: "10" }))
    expect(made).toEqual({ name: "Ana", starts_at: 10 })
    expect(runs.n).toBe(1)
    // Decoding the decoded value again would fail: its starts_at is no longer a string.
    const again = Effect.runSync(decodeInput(schema)(made))
    expect(again).toBe(made)
    expect(runs.n).toBe(1)
  })

  it("a caller's own object is always checked, even one shaped like a decoded value", () => {
    const { runs, schema } = counted()
    const decode = decodeInput(schema)
    const input = { name: "Ana", starts_at: "10" }
    expect(Effect.runSync(decode(input))).toEqual({ name: "Ana", starts_at: 10 })
    expect(Effect.runSync(decode(input))).toEqual({ name: "Ana", starts_at: 10 })
    expect(runs.n).toBe(2)
    const refused = Effect.runSync(Effect.flip(decode({ name: "", starts_at: "10" })))
    expect(refused.errors).toEqual([{ path: "name", message: "must not be empty" }])
  })

  it("a value made by a decoder of another schema is decoded anew", () => {
    const first = counted()
    const second = counted()
    const made = Either.getOrThrow(inputDecoder(first.schema)({ name: "Ana", starts_at: "10" }))
    const other = Effect.runSync(Effect.either(decodeInput(second.schema)(made)))
    // The other schema checks it, and refuses the already-decoded number.
    expect(Either.isLeft(other)).toBe(true)
    expect(second.runs.n).toBe(1)
  })
})
