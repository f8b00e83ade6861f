#!/usr/bin/env -S node --max-semi-space-size=2 --max-old-space-size=128
// The `slotwise` launcher: runs the compiled CLI (dist/adapters/http/bin.js). In a source
// checkout it first (re)builds dist with tsc when dist is missing or older than a source file.
// When esbuild is at hand (it comes with tsx) the compiled CLI is also bundled into one file,
// dist/slotwise.mjs, which starts in about a third of the time (one file to load, not 600).
import { spawnSync } from "node:child_process"
import { existsSync, readdirSync, statSync } from "node:fs"
import { createRequire } from "node:module"
import { dirname, join } from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"

const root = join(dirname(fileURLToPath(import.meta.url)), "..")
const entry = join(root, "dist", "adapters", "http", "bin.js")
const bundle = join(root, "dist", "slotwise.mjs")
const mtime = (path) => statSync(path, { throwIfNoEntry: false })?.mtimeMs ?? 0

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

const sources = ["index.ts", "src", "adapters"].map((p) => join(root, p))
const inCheckout = existsSync(join(root, "src")) && existsSync(join(root, "tsconfig.build.json"))
if (inCheckout) {
  const built = existsSync(entry) ? statSync(entry).mtimeMs : 0
  const stale = built === 0 || sources.some((p) => newest(p) > built)
  if (stale) {
    process.stderr.write("slotwise: building dist/ (tsc -p tsconfig.build.json)…\n")
    const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc")
    const result = spawnSync(process.execPath, [tsc, "-p", join(root, "tsconfig.build.json")], { cwd: root, stdio: "inherit" })
    // tsc emits even when it reports type errors; stop only if nothing runnable came out.
    if (result.status !== 0 && !existsSync(entry)) {
      process.stderr.write("slotwise: build failed\n")
      process.exit(result.status ?? 1)
    }
  }
}
if (!existsSync(entry)) {
  process.stderr.write(`slotwise: ${entry} is missing; run npm run build\n`)
  process.exit(1)
}
if (mtime(bundle) < mtime(entry)) {
  try {
    const esbuild = await import("esbuild")
    esbuild.buildSync({
      entryPoints: [entry],
      outfile: bundle,
      bundle: true,
      platform: "node",
      format: "esm",
      target: "node20",
      logLevel: "error",
      // Native and optional modules stay outside; `require` for the CommonJS ones inside.
      external: ["better-sqlite3", "bufferutil", "utf-8-validate"],
      banner: { js: "import { createRequire as __slotwiseRequire } from 'node:module'; const require = __slotwiseRequire(import.meta.url);" }
    })
  } catch {
    // No esbuild (an install without dev dependencies): run the unbundled CLI.
  }
}
await import(pathToFileURL(mtime(bundle) >= mtime(entry) ? bundle : entry).href)
