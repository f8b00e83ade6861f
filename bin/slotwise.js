#!/usr/bin/env -S node --max-semi-space-size=2 --max-old-space-size=128
// The `slotwise` launcher: runs the compiled CLI (dist/main.js). In a source
// checkout it first (re)builds dist with tsc when dist is missing or older than a source file.
// When esbuild is at hand (a dev dependency) the compiled CLI is also bundled into one file,
// dist/slotwise.mjs, which starts in about a third of the time (one file to load, not 600).
import { statSync } from "node:fs"
import { join } from "node:path"
import { pathToFileURL } from "node:url"
import { ensureBuilt, root } from "./ensure-built.js"

const entry = join(root, "dist", "main.js")
const bundle = join(root, "dist", "slotwise.mjs")
/**
 * @effect/platform-node imports undici (1 MB, a third of the bundle) for its HTTP client,
 * which the server never uses: bundle a stand-in that loads the real module on first use.
 */
const lazyUndici = {
  name: "lazy-undici",
  setup(build) {
    build.onResolve({ filter: /^undici$/ }, (args) =>
      args.namespace === "lazy-undici" ? { path: "undici", external: true } : { path: "undici", namespace: "lazy-undici" })
    build.onLoad({ filter: /.*/, namespace: "lazy-undici" }, () => ({
      loader: "js",
      contents: "let real; module.exports = new Proxy({}, { get: (_, name) => name === \"__esModule\" ? undefined : (real ??= require(\"undici\"))[name] })"
    }))
  }
}
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
      await esbuild.build({
        entryPoints: [entry],
        outfile: bundle,
        bundle: true,
        platform: "node",
        format: "esm",
        target: "node20",
        logLevel: "error",
        // Native and optional modules stay outside; `require` for the CommonJS ones inside.
        external: ["better-sqlite3", "bufferutil", "utf-8-validate"],
        plugins: [lazyUndici],
        banner: { js: "import { createRequire as __slotwiseRequire } from 'node:module'; const require = __slotwiseRequire(import.meta.url);" }
      })
    } catch {
      // A failed bundle leaves the unbundled CLI to run.
    } finally {
      await esbuild.stop()
    }
  }
}
await import(pathToFileURL(mtime(bundle) >= mtime(entry) ? bundle : entry).href)
