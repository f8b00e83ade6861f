// Bundles the booking widget (widget/index.ts) into dist/widget.js: one minified
// IIFE for browsers, no eval, no inline styles. `node widget/build.mjs` or
// `import { buildWidget } from "./build.mjs"`; part of `npm run build`.
import { mkdirSync } from "node:fs"
import { dirname, join } from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"

const here = dirname(fileURLToPath(import.meta.url))
export const root = join(here, "..")
export const widgetOutfile = join(root, "dist", "widget.js")

export const buildWidget = async (outfile = widgetOutfile) => {
  const esbuild = await import("esbuild")
  mkdirSync(dirname(outfile), { recursive: true })
  await esbuild.build({
    entryPoints: [join(here, "index.ts")],
    outfile,
    bundle: true,
    minify: true,
    format: "iife",
    platform: "browser",
    target: ["es2020", "chrome100", "firefox100", "safari15"],
    legalComments: "none",
    logLevel: "error",
    banner: { js: "/* Slotwise booking widget */" }
  })
  return outfile
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  await buildWidget(process.argv[2] ?? widgetOutfile)
}
