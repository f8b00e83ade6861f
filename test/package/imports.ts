/**
 * The project's import graph as the TypeScript compiler reads it (`ts.preProcessFile`): the
 * cycle and layout tests read the sources through it.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import ts from "typescript"

export const root = path.resolve(import.meta.dirname, "../..")

/** The source files under `dir`, as paths relative to the project root with `/`. */
export const sourcesUnder = (dir: string): Array<string> =>
  fs.readdirSync(dir, { recursive: true, encoding: "utf8" })
    .filter((file) => file.endsWith(".ts") && !file.endsWith(".d.ts"))
    .map((file) => path.relative(root, path.join(dir, file)).split(path.sep).join("/"))
    .sort()

/** `export * as Name from "…"`, which `ts.preProcessFile` does not report. */
const namespaceExports = /^export \* as \w+ from "([^"]+)"/gm

/** What a file imports, as written (`import`, `import type`, `export … from`, `import()`). */
export const specifiersOf = (text: string): Array<string> => [
  ...ts.preProcessFile(text, true, true).importedFiles.map(({ fileName }) => fileName),
  ...Array.from(text.matchAll(namespaceExports), (match) => match[1]!)
]

/** The project file a relative specifier of `from` names (`./x.js` is `./x.ts`), if it is one. */
export const resolve = (from: string, specifier: string, files: ReadonlySet<string>): string | undefined => {
  if (!specifier.startsWith(".")) return undefined
  const base = path.posix.normalize(path.posix.join(path.posix.dirname(from), specifier))
  const stem = base.replace(/\.(js|ts)$/, "")
  return [`${stem}.ts`, `${stem}/index.ts`].find((candidate) => files.has(candidate))
}

/** Each file's imports of other files in `files`, `read` giving a file's text. */
export const importGraph = (files: ReadonlyArray<string>, read: (file: string) => string): Map<string, Array<string>> => {
  const known = new Set(files)
  return new Map(files.map((file) => {
    const targets = specifiersOf(read(file)).flatMap((specifier) => resolve(file, specifier, known) ?? [])
    return [file, [...new Set(targets)].sort()]
  }))
}
