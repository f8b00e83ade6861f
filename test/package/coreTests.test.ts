/**
 * The core's tests run as `it.effect` over layers (`CoreTest`, test/support/coreTest.ts):
 * none under test/core/ builds a runtime or runs an effect by hand again.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "vitest"
import { root, sourcesUnder } from "./imports.js"

/** Building a runtime or running an effect outside the test runner's fiber. */
const HAND_RUN = /\bManagedRuntime\b|\bEffect\.run(?:Promise|Sync|Fork|Callback)(?:Exit)?\b|\bRuntime\.run\w*/g

/** Each hand-built runtime or hand-run effect in `files` (path → text), one line each. */
const handRuns = (files: ReadonlyMap<string, string>): Array<string> =>
  [...files].flatMap(([file, text]) => [...text.matchAll(HAND_RUN)].map((match) => `${file}: ${match[0]}`))

describe("the core's tests", () => {
  it("names each runtime built and each effect run by hand", () => {
    const files = new Map([
      ["test/core/a.test.ts", `const runtime = ManagedRuntime.make(CoreTest)\nawait Effect.runPromise(effect)`],
      ["test/core/b.test.ts", `Effect.runSync(x); Effect.runPromiseExit(y); Runtime.runPromise(runtime)(z)`],
      ["test/core/c.test.ts", `it.effect("books", () => effect.pipe(Effect.provide(CoreTest)))`]
    ])
    expect(handRuns(files)).toEqual([
      "test/core/a.test.ts: ManagedRuntime",
      "test/core/a.test.ts: Effect.runPromise",
      "test/core/b.test.ts: Effect.runSync",
      "test/core/b.test.ts: Effect.runPromiseExit",
      "test/core/b.test.ts: Runtime.runPromise"
    ])
  })

  it("run as it.effect under test/core/", () => {
    const files = new Map(
      sourcesUnder(path.join(root, "test/core")).map((file) => [file, fs.readFileSync(path.join(root, file), "utf8")] as const)
    )
    expect(files.has("test/core/usecases.test.ts")).toBe(true)
    expect(handRuns(files)).toEqual([])
  })
})
