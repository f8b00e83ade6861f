/** Running the docs' shell blocks as a reader would: bash, strict mode, from the repository root. */
import { spawnSync, type SpawnSyncReturns } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..")

/**
 * Runs `script` with `bash -euo pipefail` (or, with `strict: false`, plain bash, as a reader's
 * interactive shell runs a pasted block) and `env` added to this process's environment.
 */
export const runBash = (
  script: string,
  env: Record<string, string>,
  options: { readonly strict?: boolean } = {}
): SpawnSyncReturns<string> =>
  spawnSync("bash", ["--noprofile", "--norc", ...(options.strict === false ? [] : ["-euo", "pipefail"]), "-c", script], {
    cwd: root,
    encoding: "utf8",
    // No BASH_ENV: a startup file that reads unset variables would trip `-u`.
    env: { ...process.env, BASH_ENV: "", ...env },
    timeout: 60_000
  })

/** The code block (```sh, ```ts) that follows `<!-- marker -->` in the README, as written. */
export const readmeBlock = (marker: string, lang = "sh"): string => {
  const readme = fs.readFileSync(path.join(root, "README.md"), "utf8")
  const block = new RegExp(`<!-- ${marker} -->\\s*\`\`\`${lang}\\n([\\s\\S]*?)\`\`\``).exec(readme)
  if (block === null) throw new Error(`README.md has no ${lang} block after <!-- ${marker} -->`)
  return block[1]!
}

/** The README's curl walk-through, without its `KEY=` line (the caller sets KEY and BASE). */
export const walkthrough = (): string => readmeBlock("walkthrough").replace(/^KEY=.*$/m, "")
