// Rebuilds dist/ with tsc when it is missing or older than a source file, in a source
// checkout (an installed package ships dist/ and has no sources). Used by the `slotwise`
// launcher and by the benchmarks, which measure the compiled code users run.
import { spawnSync } from "node:child_process"
import { existsSync, readdirSync, statSync } from "node:fs"
import { createRequire } from "node:module"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { removeStaleChunks, serverBundleOptions } from "./bundle-options.js"

export const root = join(dirname(fileURLToPath(import.meta.url)), "..")

const newest = (path) => {
  let latest = 0
  const stack = [path]
  while (stack.length > 0) {
    const current = stack.pop()
    const stat = statSync(current, { throwIfNoEntry: false })
    if (stat === undefined) continue
    if (stat.isDirectory()) {
      for (const name of readdirSync(current)) if (name !== "node_modules") stack.push(join(current, name))
    } else if (/\.ts$/.test(current) && !current.endsWith(".d.ts")) {
      latest = Math.max(latest, stat.mtimeMs)
    }
  }
  return latest
}

/** Makes sure `entry` (a path under dist/) is built from the current sources; returns it. */
export const ensureBuilt = (entry) => {
  const sources = ["index.ts", "compose.ts", "main.ts", "library.ts", "schedulingOptions.ts", "src", "adapters"].map((p) => join(root, p))
  const inCheckout = existsSync(join(root, "src")) && existsSync(join(root, "tsconfig.build.json"))
  if (inCheckout) {
    const built = existsSync(entry) ? statSync(entry).mtimeMs : 0
    const stale = built === 0 || sources.some((p) => newest(p) > built)
    if (stale) {
      process.stderr.write("slotwise: building dist/ (tsc -p tsconfig.build.json)…\n")
      const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc")
      const result = spawnSync(process.execPath, [tsc, "-p", join(root, "tsconfig.build.json")], { cwd: root, stdio: "inherit" })
      // tsc emits even when it reports type errors; stop only if nothing runnable came out.
      if (result.status !== 0 && !existsSync(entry)) throw new Error("slotwise: build failed")
    }
    // The browser widget served at /widget.js: its own esbuild bundle, dist/widget.js.
    const widget = join(root, "dist", "widget.js")
    if (!existsSync(widget) || newest(join(root, "widget")) > statSync(widget).mtimeMs) {
      spawnSync(process.execPath, [join(root, "widget", "build.mjs")], { cwd: root, stdio: "inherit" })
    }
  }
  if (!existsSync(entry)) throw new Error(`slotwise: ${entry} is missing; run npm run build`)
  return entry
}

const mtime = (path) => statSync(path, { throwIfNoEntry: false })?.mtimeMs ?? 0

/**
 * Bundles the compiled CLI `entry` into `bundle` (and its chunks) when the bundle is older,
 * with esbuild when it is at hand (a dev dependency); returns what to run: the bundle when
 * it is current, else the entry.
 */
export const ensureBundled = async (entry, bundle) => {
  if (mtime(bundle) < mtime(entry)) {
    let esbuild
    try {
      esbuild = await import("esbuild")
    } catch {
      // No esbuild (an install without dev dependencies): the unbundled CLI runs.
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
  return mtime(bundle) >= mtime(entry) ? bundle : entry
}
