/**
 * The command line's flags: each with its help line and, for some, the environment variable
 * read when the flag is not given. Parsing refuses an unknown flag with the nearest known
 * one ("did you mean --port?"), and remembers where each value came from, so an invalid
 * value is reported under the name the user gave it (`--port` or `$SLOTWISE_PORT`).
 */
import { parseArgs } from "node:util"

/** A mistake in the command line: printed with a pointer to the command's help, exit code 2. */
export class UsageError extends Error {}

export interface FlagSpec {
  readonly type: "string" | "boolean"
  /** The environment variable read when the flag is not given (the flag wins). */
  readonly env?: string
  readonly value?: string
  readonly multiple?: boolean
  readonly help: string
}

export type FlagSpecs = Readonly<Record<string, FlagSpec>>

export const flagLines = (flags: FlagSpecs): string =>
  Object.entries(flags).map(([name, spec]) => {
    const head = `  --${name}${spec.value !== undefined ? ` ${spec.value}` : ""}`
    const env = spec.env !== undefined ? ` [$${spec.env}]` : ""
    return `${head.padEnd(30)} ${spec.help}${env}`
  }).join("\n")

/** The fewest single-character edits (insert, delete, replace, swap two neighbours) that turn `a` into `b`. */
export const editDistance = (a: string, b: string): number => {
  const d = Array.from({ length: a.length + 1 }, (_, i) => Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)))
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const row = d[i]!
      row[j] = Math.min(d[i - 1]![j]! + 1, row[j - 1]! + 1, d[i - 1]![j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1))
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) row[j] = Math.min(row[j]!, d[i - 2]![j - 2]! + 1)
    }
  }
  return d[a.length]![b.length]!
}

/**
 * The candidate `word` most likely stands for: within two edits (one for short words), or
 * one it begins (`--data` for `--database`); undefined when none is close.
 */
export const closest = (word: string, candidates: ReadonlyArray<string>): string | undefined => {
  const limit = word.length <= 4 ? 1 : 2
  const scored = candidates
    .map((candidate) => ({ candidate, distance: editDistance(word.toLowerCase(), candidate.toLowerCase()) }))
    .filter(({ candidate, distance }) => distance <= limit || (word.length >= 3 && candidate.startsWith(word)))
    .sort((x, y) => x.distance - y.distance)
  return scored[0]?.candidate
}

/** "; did you mean X?" when a candidate is close to `word`, else "". */
export const didYouMean = (word: string, candidates: ReadonlyArray<string>, show = (c: string) => c): string => {
  const near = closest(word, candidates)
  return near === undefined ? "" : `; did you mean ${show(near)}?`
}

export const booleanOf = (name: string, text: string): boolean => {
  if (/^(1|true|yes|on)$/i.test(text)) return true
  if (/^(0|false|no|off)$/i.test(text)) return false
  throw new UsageError(`${name} must be true or false (1/0, yes/no), got ${text}`)
}

/** Refuses a flag not among `names` (and `--help`), naming the nearest one that is. */
export const refuseUnknownFlags = (names: ReadonlyArray<string>, args: ReadonlyArray<string>) => {
  const known = [...names, "help"]
  for (const arg of args) {
    if (arg === "--") return
    if (arg === "-h" || !arg.startsWith("-") || arg === "-") continue
    const name = arg.replace(/^--?/, "").split("=", 1)[0]!
    if (arg.startsWith("--") && known.includes(name)) continue
    throw new UsageError(`unknown option ${arg.split("=", 1)[0]}${didYouMean(name, known, (c) => `--${c}`)}`)
  }
}

type Values<F extends FlagSpecs> =
  & {
    readonly [K in keyof F]?: F[K] extends { multiple: true } ? Array<string> : F[K]["type"] extends "boolean" ? boolean : string
  }
  & { readonly help?: boolean }

/**
 * Parses `args` against `flags`, then fills each flag not given from its environment
 * variable. `source(name)` is how to name a value in an error: `--name`, or `$VARIABLE`
 * when the value came from the environment.
 */
export const parseFlags = <F extends FlagSpecs>(flags: F, args: ReadonlyArray<string>, env: NodeJS.ProcessEnv, positionals = false) => {
  refuseUnknownFlags(Object.keys(flags), args)
  const parsed = parseArgs({
    args: [...args],
    strict: true,
    allowPositionals: positionals,
    options: {
      ...Object.fromEntries(Object.entries(flags).map(([name, spec]) => [name, { type: spec.type, multiple: spec.multiple ?? false }])),
      help: { type: "boolean", short: "h" }
    }
  })
  const values: Record<string, string | boolean | Array<string> | undefined> = { ...parsed.values }
  const fromEnvironment = new Set<string>()
  for (const [name, spec] of Object.entries(flags)) {
    const fromEnv = spec.env === undefined ? undefined : env[spec.env]
    if (values[name] !== undefined || fromEnv === undefined || fromEnv === "") continue
    values[name] = spec.type === "boolean" ? booleanOf(`$${spec.env!}`, fromEnv) : fromEnv
    fromEnvironment.add(name)
  }
  const source = (name: keyof F & string): string => (fromEnvironment.has(name) ? `$${flags[name]!.env!}` : `--${name}`)
  return { values: values as Values<F>, positionals: parsed.positionals, source }
}

/** Whether a parse error is node:util's (a missing value, a stray argument): a usage error too. */
export const isParseError = (error: unknown): boolean => String((error as { code?: unknown })?.code ?? "").startsWith("ERR_PARSE_ARGS")
