// `npm install` / `npm ci` in a checkout, `npm pack`, and npm installing this package from
// git or a folder run this (the `prepare` script): it builds dist/ and the CLI's bundle when
// they are missing or older than the sources, so a fresh checkout is ready, a packed tarball
// carries a current bundle, and an unchanged checkout costs a moment.
// Without TypeScript (an install that omits dev dependencies) there is nothing to build with:
// dist/ must come from elsewhere (a build stage, the published package).
import { createRequire } from "node:module"
import { join } from "node:path"
import { ensureBuilt, ensureBundled, root } from "./ensure-built.js"

let hasTypeScript = true
try {
  createRequire(import.meta.url).resolve("typescript/bin/tsc")
} catch {
  hasTypeScript = false
}
if (hasTypeScript) {
  try {
    await ensureBundled(ensureBuilt(join(root, "dist", "main.js")), join(root, "dist", "slotwise.mjs"))
  } catch (error) {
    process.stderr.write(`${error.message}\n`)
    process.exit(1)
  }
} else {
  process.stderr.write("slotwise: TypeScript is not installed (no dev dependencies): dist/ is not built here\n")
}
