/**
 * The README's figure for how long the suite takes says what it was measured on: a figure
 * without its machine reads as a promise, and on a loaded machine it is broken at once.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..")

describe("the README's suite time", () => {
  it("names the machine, the Node version and when it was measured, and that a busy machine takes longer", () => {
    const readme = fs.readFileSync(path.join(root, "README.md"), "utf8")
    const section = readme.slice(readme.indexOf("## Start, and test"), readme.indexOf("\n## ", readme.indexOf("## Start, and test") + 1))
    expect(section).toMatch(
      /The suite takes about \d+ minutes on a quiet two-core machine \(Node \d+, measured [A-Z][a-z]+ \d{4}\); more on a busy one/
    )
  })
})
