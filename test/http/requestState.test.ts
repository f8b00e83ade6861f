/**
 * What a request hands its handlers goes through the Effect context: the pipeline hands the
 * gate's passage to the router in the request's context, and the security middleware provides
 * the principal and the tenant. The HTTP adapter's source keeps no table keyed by request
 * objects and never rewrites the context of the fiber it runs in. The direct read lane is the
 * one exception to the second: it serves a read in a fiber of its own that starts with an empty
 * context and sets the tenant into it (adapters/http/directReads.ts, `asTenant`).
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "vitest"

const adapter = path.resolve(import.meta.dirname, "../../adapters/http")
const DIRECT_READ_LANE = "directReads.ts"

const sources = (fs.readdirSync(adapter, { recursive: true, encoding: "utf8" }))
  .filter((file) => file.endsWith(".ts"))
  .sort()
  .map((file) => ({ file, text: fs.readFileSync(path.join(adapter, file), "utf8") }))

/** `WeakMap<Key, …>` declarations and `new WeakMap(…)` without a key type, with the key type when named. */
const weakMapKeys = (text: string): ReadonlyArray<string> =>
  [...text.matchAll(/WeakMap\s*(<\s*([^,>]+))?/g)].map((match) => match[2]?.trim() ?? "(no key type)")

/** Calls that set, update or modify the context FiberRef of the running fiber. */
const CONTEXT_WRITE =
  /\b(?:set|update\w*|getAndSet|getAndUpdate\w*|modify\w*|setFiberRef|unsafeSetFiberRef)\s*\(\s*(?:FiberRef\.)?currentContext\b/

describe("request state in the HTTP adapter", () => {
  it("finds the adapter's sources", () => {
    expect(sources.map((s) => s.file)).toEqual(expect.arrayContaining(["middleware/gate.ts", "handlers/security.ts", DIRECT_READ_LANE]))
  })

  it("keeps no WeakMap keyed by requests, and names the key type of every WeakMap", () => {
    const keyedByRequest = sources.flatMap(({ file, text }) =>
      weakMapKeys(text)
        .filter((key) => key === "(no key type)" || /Request|IncomingMessage|ServerResponse/.test(key))
        .map((key) => `${file}: WeakMap<${key}, …>`)
    )
    expect(keyedByRequest).toEqual([])
  })

  it("never writes the running fiber's context (but in the direct read lane's own fibers)", () => {
    const writes = sources
      .filter(({ file }) => file !== DIRECT_READ_LANE)
      .flatMap(({ file, text }) =>
        text.split("\n").flatMap((line, i) => CONTEXT_WRITE.test(line) ? [`${file}:${i + 1}: ${line.trim()}`] : [])
      )
    expect(writes).toEqual([])
  })

  it("recognises a context write where it is (the direct read lane's)", () => {
    const lane = sources.find(({ file }) => file === DIRECT_READ_LANE)!
    expect(CONTEXT_WRITE.test(lane.text)).toBe(true)
  })
})
