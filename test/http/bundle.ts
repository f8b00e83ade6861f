/**
 * A TypeScript entry (main.ts, a test fixture) bundled with esbuild, for tests
 * that start it as a child process. `node --import tsx` compiles some 600 modules at every
 * start, which on a busy machine takes most of a test's time; a bundle loads in a fraction
 * of it. Bundles are shared by every test file and run until a source changes.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { serverBundleOptions } from "../../bin/bundle-options.js"

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..")
const cacheDir = path.join(root, ".vitest-tmp")

/** The newest modification time (and number) of the TypeScript sources a bundle may include. */
const sourcesStamp = (entry: string): string => {
  let newest = 0
  let count = 0
  const stack = [entry, "main.ts", "index.ts", "compose.ts", "library.ts", "schedulingOptions.ts", "src", "adapters"].map((p) =>
    path.join(root, p)
  )
  while (stack.length > 0) {
    const current = stack.pop()!
    const stat = fs.statSync(current, { throwIfNoEntry: false })
    if (stat === undefined) continue
    if (stat.isDirectory()) { for (const name of fs.readdirSync(current)) stack.push(path.join(current, name)) }
    else if (current.endsWith(".ts")) {
      newest = Math.max(newest, stat.mtimeMs)
      count++
    }
  }
  return `${Math.floor(newest)}-${count}`
}

const bundles = new Map<string, Promise<string>>()
/** One build at a time in a process: each ends by stopping esbuild's service. */
let previous: Promise<unknown> = Promise.resolve()

/** The bundle of `entry` (a path from the repository root), built if missing or stale. */
export const bundled = (entry: string): Promise<string> => {
  let file = bundles.get(entry)
  if (file === undefined) {
    file = previous.then(() => build(entry), () => build(entry))
    previous = file
    bundles.set(entry, file)
  }
  return file
}

const build = async (entry: string): Promise<string> => {
  const name = entry.replace(/\.ts$/, "").replace(/[^A-Za-z0-9]+/g, "-")
  // A directory per build: the entry and its chunks.
  const dir = path.join(cacheDir, `${name}.${sourcesStamp(entry)}`)
  const file = path.join(dir, `${name}.mjs`)
  if (fs.existsSync(file)) return file
  fs.mkdirSync(cacheDir, { recursive: true })
  const esbuild = await import("esbuild")
  const partial = `${dir}.${process.pid}.tmp`
  try {
    // Exactly as bin/slotwise.js bundles the binary.
    await esbuild.build(serverBundleOptions(path.join(root, entry), path.join(partial, `${name}.mjs`)))
  } finally {
    await esbuild.stop()
  }
  // A rename is atomic: of test files bundling at once, the first publishes a whole
  // directory and the others drop theirs.
  try {
    fs.renameSync(partial, dir)
  } catch {
    fs.rmSync(partial, { recursive: true, force: true })
  }
  // Older bundles of the same entry go.
  for (const old of fs.readdirSync(cacheDir)) {
    const other = path.join(cacheDir, old)
    if (old.startsWith(`${name}.`) && !old.endsWith(".tmp") && other !== dir) fs.rmSync(other, { recursive: true, force: true })
  }
  return file
}
