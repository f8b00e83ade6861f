import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { readTogether } from "../../src/scheduling/loadSchedule.js"
import type { StorageService } from "../../src/ports/storage.js"

// Reads one after another only need no `readConcurrency` of the storage.
const together = readTogether({} as StorageService)

describe("readTogether", () => {
  it("runs reads one after another, answering their results in order", () => {
    const ran: Array<number> = []
    const read = (n: number) => Effect.sync(() => (ran.push(n), n * 10))
    expect(Effect.runSync(together([read(1), read(2), read(3)], false))).toEqual([10, 20, 30])
    expect(ran).toEqual([1, 2, 3])
  })

  it("gives each run of the program its own results", () => {
    let n = 0
    const program = together.andThen([Effect.sync(() => ++n), Effect.succeed("b")], false, (results) => Effect.succeed(results))
    const first = Effect.runSync(program)
    const second = Effect.runSync(program)
    expect(first).toEqual([1, "b"])
    expect(second).toEqual([2, "b"])
    expect(first).not.toBe(second)
  })

  it("stops at the first failing read", () => {
    const ran: Array<string> = []
    const program = together([Effect.fail("refused"), Effect.sync(() => void ran.push("second"))], false)
    expect(Effect.runSync(Effect.flip(program))).toBe("refused")
    expect(ran).toEqual([])
  })

  it("answers no reads at once", () => {
    expect(Effect.runSync(together([] as ReadonlyArray<Effect.Effect<never>>, false))).toEqual([])
  })
})
