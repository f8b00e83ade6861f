/**
 * Adapters never build one another's layers (compose.ts does): an adapter imports another
 * adapter's module only where that module is a shared helper, named below.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import ts from "typescript"
import { expect, it } from "vitest"

const root = path.resolve(import.meta.dirname, "../..")
const adapters = path.join(root, "adapters")

/** The helpers adapters share: the SQL layer beneath both SQL stores, the command-line pieces, the client-address reader. */
const SHARED = [/^adapters\/sql\//, /^adapters\/cli\//, /^adapters\/http\/clientAddress\.ts$/]
/** `slotwise serve` runs the HTTP server: the CLI names the API's version and the server's options. */
const CLI_SERVES = /^adapters\/http\/(api|app|server)\.ts$/

it("an adapter imports another adapter only for a shared helper", () => {
  const crossings = fs.readdirSync(adapters, { recursive: true, encoding: "utf8" })
    .filter((file) => file.endsWith(".ts") && !file.endsWith(".d.ts"))
    .flatMap((file) => {
      const from = path.posix.join("adapters", file.split(path.sep).join("/"))
      const { importedFiles } = ts.preProcessFile(fs.readFileSync(path.join(root, from), "utf8"), true, true)
      return importedFiles
        .filter(({ fileName }) => fileName.startsWith("."))
        .map(({ fileName }) => path.posix.normalize(path.posix.join(path.posix.dirname(from), fileName)).replace(/\.js$/, ".ts"))
        .filter((to) => to.startsWith("adapters/") && to.split("/")[1] !== from.split("/")[1])
        .filter((to) => !SHARED.some((shared) => shared.test(to)))
        .filter((to) => !(from.startsWith("adapters/cli/") && CLI_SERVES.test(to)))
        .map((to) => `${from} → ${to}`)
    })
  expect(crossings).toEqual([])
})
