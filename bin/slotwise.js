#!/usr/bin/env -S node --max-semi-space-size=16 --max-old-space-size=128
// The `slotwise` launcher: runs the compiled CLI (dist/main.js) in this process, so signals
// sent to it reach the server. In a source checkout it first (re)builds dist with tsc when
// dist is missing or older than a source file. When esbuild is at hand (a dev dependency) the
// compiled CLI is also bundled, into dist/slotwise.mjs and its chunks, which starts in about
// a third of the time (a few files to load, not 600).
import { join } from "node:path"
import { pathToFileURL } from "node:url"
import { ensureBuilt, ensureBundled, root } from "./ensure-built.js"

const entry = join(root, "dist", "main.js")

try {
  ensureBuilt(entry)
} catch (error) {
  process.stderr.write(`${error.message}\n`)
  process.exit(1)
}
await import(pathToFileURL(await ensureBundled(entry, join(root, "dist", "slotwise.mjs"))).href)
