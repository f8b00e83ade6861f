// How the server is bundled with esbuild: by the launcher (bin/slotwise.js) and by the tests
// that start the binary as a child process, so both run the same bundle.
import { readdirSync, rmSync } from "node:fs"
import { basename, dirname, join, resolve } from "node:path"

/**
 * Modules the server imports but uses only on a path a start does not take, bundled as
 * stand-ins that load the real module on first use: @effect/platform-node's HTTP client
 * (undici, 1 MB, a third of the bundle; the server never uses it), its WebSocket upgrades
 * (ws: `WebSocket` and `WebSocketServer`, made on the first upgrade) and the MIME table of
 * its file responses (mime). A stand-in is a proxy, or getters for the named exports
 * (namespace imports copy a module's own names when it is imported).
 */
const LAZY_MODULES = { undici: undefined, mime: undefined, ws: ["WebSocket", "WebSocketServer"] }

/**
 * The stand-in for `name` imported by the package `importer`: the real module is resolved
 * from that package's folder, so the version it depends on is loaded even when another
 * version of the same name sits at the top of node_modules.
 */
const standIn = (name, importer) => {
  const from = importer === ""
    ? ""
    : `, { paths: [require("node:path").dirname(require.resolve(${JSON.stringify(`${importer}/package.json`)}))] }`
  const load = `let real; const load = () => (real ??= require(require.resolve(${JSON.stringify(name)}${from})));`
  const exports = LAZY_MODULES[name]
  return load + (exports === undefined
    ? "module.exports = new Proxy({}, { get: (_, key) => key === \"__esModule\" ? undefined : load()[key] })"
    : exports.map((key) =>
      `Object.defineProperty(exports, ${JSON.stringify(key)}, { enumerable: true, get: () => load()[${JSON.stringify(key)}] });`
    ).join(""))
}

/** The package a file belongs to, by its last node_modules folder ("" outside node_modules). */
const packageOf = (file) => /node_modules[\\/]((?:@[^\\/]+[\\/])?[^\\/]+)[\\/](?!.*node_modules)/.exec(file)?.[1].replace("\\", "/") ?? ""

const lazyModules = {
  name: "lazy-modules",
  setup(build) {
    const filter = new RegExp(`^(${Object.keys(LAZY_MODULES).join("|")})$`)
    build.onResolve({ filter }, (args) => ({ path: `${args.path}|${packageOf(args.importer)}`, namespace: "lazy-module" }))
    build.onLoad({ filter: /.*/, namespace: "lazy-module" }, (args) => {
      const [name, importer] = args.path.split("|")
      return { loader: "js", contents: standIn(name, importer) }
    })
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
    plugins: [lazyModules],
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
