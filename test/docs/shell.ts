/** Running the docs' shell blocks as a reader would: bash, strict mode, from the repository root. */
import { spawnSync, type SpawnSyncReturns } from "node:child_process"
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
