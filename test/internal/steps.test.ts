import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { thenDo } from "../../src/internal/steps.js"

describe("thenDo", () => {
  it("is `next` itself after a step with nothing to do", () => {
    const next = Effect.succeed(1)
    expect(thenDo(Effect.void, next)).toBe(next)
  })

  it("is the step itself when `next` has nothing to do", () => {
    const first = Effect.sync(() => undefined)
    expect(thenDo(first, Effect.void)).toBe(first)
  })

  it("runs a step that does something first, then `next`", () => {
    const ran: Array<string> = []
    const first = Effect.sync(() => void ran.push("first"))
    const next = Effect.sync(() => {
      ran.push("next")
      return 2
    })
    expect(Effect.runSync(thenDo(first, next))).toBe(2)
    expect(ran).toEqual(["first", "next"])
  })

  it("stops at a failing first step", () => {
    const next = Effect.sync(() => 3)
    expect(Effect.runSync(Effect.either(thenDo(Effect.fail("locked"), next)))).toEqual(
      expect.objectContaining({ _tag: "Left", left: "locked" })
    )
  })
})
