// How the server is bundled with esbuild: by the launcher (bin/slotwise.js) and by the tests
// that start the binary as a child process, so both run the same bundle.
import { readdirSync, rmSync } from "node:fs"
import { basename, dirname, join, resolve } from "node:path"

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

/**
 * esbuild options that bundle `entry` (the compiled or TypeScript main) into `outfile` (an
 * `.mjs`), with what is imported on first use (the OAuth server, the PostgreSQL and Redis
 * clients) split into chunks beside it, in `<name>-chunks/`: a start parses only what it runs.
 */
export const serverBundleOptions = (entry, outfile) => {
  const name = basename(outfile, ".mjs")
  return {
    entryPoints: [entry],
    outdir: dirname(outfile),
    entryNames: name,
    chunkNames: `${name}-chunks/[name]-[hash]`,
    outExtension: { ".js": ".mjs" },
    splitting: true,
    metafile: true,
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    logLevel: "error",
    // Native and optional modules stay outside; `require` for the CommonJS ones inside.
    external: ["better-sqlite3", "bufferutil", "utf-8-validate"],
    plugins: [lazyUndici],
    banner: { js: "import { createRequire as __slotwiseRequire } from 'node:module'; const require = __slotwiseRequire(import.meta.url);" }
  }
}

/** Removes the chunks of earlier builds of `outfile` that `result` (its build) no longer uses. */
export const removeStaleChunks = (outfile, result) => {
  const dir = join(dirname(outfile), `${basename(outfile, ".mjs")}-chunks`)
  const current = new Set(Object.keys(result.metafile?.outputs ?? {}).map((file) => resolve(file)))
  for (const file of readdirSync(dir, { withFileTypes: true })) {
    const path = resolve(dir, file.name)
    if (!current.has(path)) rmSync(path, { force: true, recursive: true })
  }
}
