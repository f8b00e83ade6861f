// How the server is bundled into one file with esbuild: by the launcher (bin/slotwise.js)
// and by the tests that start the binary as a child process, so both run the same bundle.

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

/** esbuild options that bundle `entry` (the compiled or TypeScript main) into `outfile`. */
export const serverBundleOptions = (entry, outfile) => ({
  entryPoints: [entry],
  outfile,
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
