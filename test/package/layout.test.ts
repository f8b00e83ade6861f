/**
 * The code's shape (docs/architecture.md): no source file in src/, adapters/ or widget/ over
 * 400 lines; the core (src/) imports only `effect` and its own modules; src/domain/, what
 * every feature shares, imports nothing above it (no feature folder, no port).
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "vitest"
import { root, sourcesUnder, specifiersOf } from "./imports.js"

const MAX_LINES = 400
/** What src/domain/ may use outside itself: the zone rules its time schemas are read with. */
const DOMAIN_MAY_USE: ReadonlyArray<string> = ["src/scheduling/zones"]

/** Lines as `wc -l` counts them. */
const linesOf = (text: string) => text.split("\n").length - 1

/** Why `files` (path from the project root → text) break the layout, one line each. */
const layoutProblems = (files: ReadonlyMap<string, string>): Array<string> => {
  const problems: Array<string> = []
  for (const [file, text] of files) {
    if (linesOf(text) > MAX_LINES) problems.push(`${file}: ${linesOf(text)} lines, over ${MAX_LINES}`)
    if (!file.startsWith("src/")) continue
    for (const specifier of specifiersOf(text)) {
      if (!specifier.startsWith(".")) {
        if (specifier !== "effect" && !specifier.startsWith("effect/"))
          problems.push(`${file}: imports ${specifier}; the core imports only effect`)
        continue
      }
      const target = path.posix.normalize(path.posix.join(path.posix.dirname(file), specifier)).replace(/\.(js|ts)$/, "")
      if (!target.startsWith("src/")) problems.push(`${file}: imports ${specifier}, outside src/`)
      else if (file.startsWith("src/domain/") && !target.startsWith("src/domain/") && !DOMAIN_MAY_USE.includes(target)) {
        problems.push(`${file}: imports ${specifier}; src/domain/ imports nothing above it`)
      }
    }
  }
  return problems
}

describe("the code's layout", () => {
  it("names each file too long, each import of the core from outside it, and each of src/domain/ from above it", () => {
    const files = new Map([
      [
        "src/domain/shared.ts",
        [
          `import { Booking } from "../bookings/booking.js"`,
          `import type { Tenant } from "../ports/tenant.js"`,
          `import { localToUtc } from "../scheduling/zones.js"`,
          `import { Id } from "./ids.js"`,
          `import { Schema } from "effect"`
        ].join("\n")
      ],
      [
        "src/bookings/feature.ts",
        `import * as fs from "node:fs"\nimport { Effect } from "effect"\nexport * from "../../adapters/sql/query.js"\nimport("./lazy.js")`
      ],
      ["adapters/long.ts", "x\n".repeat(MAX_LINES + 1)],
      ["adapters/full.ts", `import * as fs from "node:fs"\n` + "x\n".repeat(MAX_LINES - 1)]
    ])
    expect(layoutProblems(files)).toEqual([
      `src/domain/shared.ts: imports ../bookings/booking.js; src/domain/ imports nothing above it`,
      `src/domain/shared.ts: imports ../ports/tenant.js; src/domain/ imports nothing above it`,
      `src/bookings/feature.ts: imports node:fs; the core imports only effect`,
      `src/bookings/feature.ts: imports ../../adapters/sql/query.js, outside src/`,
      `adapters/long.ts: ${MAX_LINES + 1} lines, over ${MAX_LINES}`
    ])
  })

  it("holds for src/, adapters/ and widget/", () => {
    const files = new Map(
      ["src", "adapters", "widget"].flatMap((dir) => sourcesUnder(path.join(root, dir)))
        .map((file) => [file, fs.readFileSync(path.join(root, file), "utf8")] as const)
    )
    // The walk sees every part, the core's domain included.
    expect(files.has("src/domain/common.ts") && files.has("adapters/http/app.ts") && files.has("widget/widget.ts")).toBe(true)
    expect(layoutProblems(files)).toEqual([])
  })
})
