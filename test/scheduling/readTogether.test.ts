import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { readsThen, readTogether } from "../../src/scheduling/readTogether.js"
import { type CollectionRead, type CollectionSpec, Read, type StorageService } from "../../src/ports/storage.js"
import { Tenant } from "../../src/ports/tenant.js"

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

describe("readsThen", () => {
  const Docs: CollectionSpec<{ readonly id: string }> = { name: "docs", indexes: {}, order: [] }
  /** A storage that records how each read was asked for; `parallel` as its readConcurrency. */
  const recording = (parallel: number | undefined) => {
    const asked: Array<string> = []
    const storage = {
      readMany: (reads: ReadonlyArray<CollectionRead<unknown>>) =>
        Effect.sync(() => (asked.push(`many:${reads.length}`), reads.map((r) => `${r.op}`))),
      collection: () => ({
        list: () => Effect.sync(() => (asked.push("list"), "list")),
        listIndexes: () => Effect.sync(() => (asked.push("listIndexes"), "listIndexes"))
      }),
      ...(parallel === undefined ? {} : { readConcurrency: Effect.succeed(parallel) })
    } as unknown as StorageService
    return { asked, run: readsThen(storage) }
  }
  const reads = [Read.list(Docs, {}), Read.listIndexes(Docs, {})] as const
  const program = (run: ReturnType<typeof readsThen>, worthIt: boolean) =>
    Effect.provideService(run(reads, worthIt, (results) => Effect.succeed(results)), Tenant, { account_id: "a", environment: "sandbox" })

  it("reads in one readMany where the storage cannot or need not spread them", () => {
    for (const [parallel, worthIt] of [[undefined, true], [1, true], [4, false]] as const) {
      const { asked, run } = recording(parallel)
      expect(Effect.runSync(program(run, worthIt))).toEqual(["list", "listIndexes"])
      expect(asked).toEqual(["many:2"])
    }
  })

  it("reads each by its collection's method, in order, from a storage without readMany", () => {
    const asked: Array<string> = []
    const storage = {
      collection: () => ({
        list: () => Effect.sync(() => (asked.push("list"), "list")),
        listIndexes: () => Effect.sync(() => (asked.push("listIndexes"), "listIndexes"))
      })
    } as unknown as StorageService
    expect(Effect.runSync(program(readsThen(storage), false))).toEqual(["list", "listIndexes"])
    expect(asked).toEqual(["list", "listIndexes"])
  })

  it("reads each by its collection's method, at once, where the storage reads in parallel and it is worth it", () => {
    const { asked, run } = recording(4)
    expect(Effect.runSync(program(run, true))).toEqual(["list", "listIndexes"])
    expect([...asked].sort()).toEqual(["list", "listIndexes"])
  })
})
