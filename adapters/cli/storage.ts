/**
 * The storage every command opens: `--database`, else `$SLOTWISE_DATABASE_URL`, else
 * ./slotwise.db. A `postgres://` (`postgresql://`) URL is PostgreSQL; a path is a SQLite file;
 * any other `scheme://` is a mistake (a misspelled `postgres://`), never a file name.
 */
import { resolve } from "node:path"
import { didYouMean, type FlagSpec, UsageError } from "./flags.js"
import { POSTGRES_URL, storageFromLocation } from "./storageLocation.js"

/** The storage the flags name: a `--database` value is a SQLite file or a `postgres://` URL. */
export type StorageFlag = "memory" | { readonly sqlite: string } | { readonly postgres: string }

export const DEFAULT_DATABASE = "./slotwise.db"

export const DATABASE: FlagSpec = {
  type: "string",
  env: "SLOTWISE_DATABASE_URL",
  value: "<file|url>",
  help: "a SQLite database file (created if missing) or a postgres:// (postgresql://) URL; default ./slotwise.db"
}

/** A URL with its password (and any `password` parameter) replaced, fit for logs and errors. */
export const withoutPassword = (url: string): string => {
  if (!URL.canParse(url)) return url.replace(/\/\/[^@/]*@/, "//***@")
  const parsed = new URL(url)
  if (parsed.password !== "") parsed.password = "***"
  if (parsed.searchParams.has("password")) parsed.searchParams.set("password", "***")
  return parsed.href
}

/** `source` names where `database` came from in an error (default: `--database` when given). */
export const storageFlag = (
  database: string | undefined,
  env: NodeJS.ProcessEnv,
  source = database !== undefined ? "--database" : "$SLOTWISE_DATABASE_URL"
): StorageFlag => {
  const location = database ?? (env.SLOTWISE_DATABASE_URL || DEFAULT_DATABASE)
  const scheme = /^([A-Za-z][A-Za-z0-9+.-]+):\/\//.exec(location)?.[1]
  if (scheme !== undefined && !POSTGRES_URL.test(location)) {
    throw new UsageError(
      `${source}: ${scheme}:// is not a storage this server knows (${withoutPassword(location)})` +
        `${didYouMean(scheme, ["postgres", "postgresql"], (s) => `${s}://`)} ` +
        "Give a postgres:// (postgresql://) URL, or a SQLite file's path"
    )
  }
  return storageFromLocation(location)
}

/** The storage in words, as commands print it: never a password. */
export const describeStorage = (storage: StorageFlag): string =>
  storage === "memory"
    ? "in-memory storage (lost on exit)"
    : "postgres" in storage
    ? `PostgreSQL ${withoutPassword(storage.postgres)}`
    : `SQLite database ${resolve(storage.sqlite)}`
