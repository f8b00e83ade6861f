import { describe, expect, it } from "vitest"
import { Either, Schema } from "effect"
import { decodedAs } from "../../adapters/http/contract/common.js"
import { bodyDecoderOf, rememberDecoded } from "../../adapters/http/contract/decodedBodies.js"

const Named = Schema.Struct({ name: Schema.String })
const Counted = Schema.Struct({ count: Schema.Number })

describe("bodies decoded once", () => {
  it("a payload schema takes the value its own decoder made of this very body, and decodes any other", () => {
    const named = decodedAs(Named)
    const counted = decodedAs(Counted)
    const decodeNamed = bodyDecoderOf(named.ast)!
    const decodeCounted = bodyDecoderOf(counted.ast)!
    expect(decodeNamed).toBeTypeOf("function")

    const parsed: Record<string, unknown> = { name: "Ana" }
    const decoded = decodeNamed(parsed)
    expect(Either.isRight(decoded)).toBe(true)
    // A stand-in value shows which path was taken: remembered, not decoded again.
    const remembered = { name: "remembered" }
    rememberDecoded(parsed, decodeNamed, remembered)
    expect(Schema.decodeUnknownSync(named)(parsed)).toBe(remembered)
    // Another decoder's schema never takes it: it decodes the body itself, and refuses it.
    expect(Either.isLeft(Schema.decodeUnknownEither(counted)(parsed))).toBe(true)
    // An equal body that is another object is decoded as usual.
    expect(Schema.decodeUnknownSync(named)({ name: "Ana" })).toEqual({ name: "Ana" })
    expect(Either.isLeft(decodeCounted({ count: "x" }))).toBe(true)
  })

  it("a bad body's issues carry the core's messages, one per field", () => {
    const decode = bodyDecoderOf(decodedAs(Named).ast)!
    const refused = decode({ name: 1, extra: true })
    expect(Either.isLeft(refused) && refused.left.map((issue) => issue.path.join("."))).toEqual(expect.arrayContaining(["name", "extra"]))
  })
})
