#!/usr/bin/env -S node --max-semi-space-size=2 --max-old-space-size=128
// The `slotwise` launcher: runs the compiled CLI (dist/main.js). In a source
// checkout it first (re)builds dist with tsc when dist is missing or older than a source file.
// When esbuild is at hand (a dev dependency) the compiled CLI is also bundled, into
// dist/slotwise.mjs and its chunks, which starts in about a third of the time (a few files
// to load, not 600).
import { statSync } from "node:fs"
import { join } from "node:path"
import { pathToFileURL } from "node:url"
import { removeStaleChunks, serverBundleOptions } from "./bundle-options.js"
import { ensureBuilt, root } from "./ensure-built.js"

const entry = join(root, "dist", "main.js")
const bundle = join(root, "dist", "slotwise.mjs")
const mtime = (path) => statSync(path, { throwIfNoEntry: false })?.mtimeMs ?? 0

try {
  ensureBuilt(entry)
} catch (error) {
  process.stderr.write(`${error.message}\n`)
  process.exit(1)
}
if (mtime(bundle) < mtime(entry)) {
  let esbuild
  try {
    esbuild = await import("esbuild")
  } catch {
    // No esbuild (an install without dev dependencies): run the unbundled CLI.
  }
  if (esbuild !== undefined) {
    try {
      // The async API, then stop(): its service process (~200 MB) must not outlive the
      // bundling (buildSync keeps one alive for the life of the server).
      removeStaleChunks(bundle, await esbuild.build(serverBundleOptions(entry, bundle)))
    } catch {
      // A failed bundle leaves the unbundled CLI to run.
    } finally {
      await esbuild.stop()
    }
  }
}
await import(pathToFileURL(mtime(bundle) >= mtime(entry) ? bundle : entry).href)
