/**
 * The `slotwise` command line: `serve` runs the HTTP server; `accounts create | list |
 * update` manage accounts offline. It parses flags (each with its environment variable) into
 * options; the layers come from the composition root (main.ts passes compose.ts's builders in).
 */
import { NodeRuntime } from "@effect/platform-node"
import { Cause, Effect, Layer, ManagedRuntime } from "effect"
import { resolve } from "node:path"
import { parseArgs } from "node:util"
import { Accounts } from "../../src/Accounts.js"
import type { Account, AccountWithKeys } from "../../src/domain/account.js"
import { isSlotwiseFailure, toProblem } from "../../src/domain/errors.js"
import { VERSION } from "./api.js"
import type { AppOptions } from "./app.js"
import type { ServeOptions } from "./server.js"

/** The storage the flags name: a `--database` value is a SQLite file or a `postgres://` URL. */
export type StorageFlag = "memory" | { readonly sqlite: string } | { readonly postgres: string }

export const DEFAULT_DATABASE = "./slotwise.db"

/**
 * The storage every command opens: `--database`, else `$SLOTWISE_DATABASE_URL`, else
 * ./slotwise.db. A `postgres://` (`postgresql://`) URL is PostgreSQL; anything else a SQLite file.
 */
export const storageFlag = (database: string | undefined, env: NodeJS.ProcessEnv): StorageFlag => {
  const location = database ?? (env.SLOTWISE_DATABASE_URL || DEFAULT_DATABASE)
  return /^postgres(ql)?:\/\//i.test(location) ? { postgres: location } : { sqlite: location }
}

/** A URL with its password (and any `password` parameter) replaced, fit for logs and errors. */
export const withoutPassword = (url: string): string => {
  if (!URL.canParse(url)) return url.replace(/\/\/[^@/]*@/, "//***@")
  const parsed = new URL(url)
  if (parsed.password !== "") parsed.password = "***"
  if (parsed.searchParams.has("password")) parsed.searchParams.set("password", "***")
  return parsed.href
}

/** The storage in words, as commands print it: never a password. */
export const describeStorage = (storage: StorageFlag): string =>
  storage === "memory"
    ? "in-memory storage (lost on exit)"
    : "postgres" in storage
    ? `PostgreSQL ${withoutPassword(storage.postgres)}`
    : `SQLite database ${resolve(storage.sqlite)}`

/** The layers the command line runs, from the composition root. */
export interface CliLayers {
  readonly server: (options: ServeOptions & AppOptions & {
    readonly storage: StorageFlag
    readonly allowPrivateWebhooks: boolean
    readonly redis: string | undefined
    readonly webhooks: { readonly timeoutMs?: number; readonly leaseMs?: number }
    readonly dnsServer: string | undefined
    readonly calendarSyncMinutes: number | undefined
  }) => Layer.Layer<never, unknown>
  readonly accounts: (storage: StorageFlag) => Layer.Layer<Accounts, unknown>
  /** `users create`: the account users OAuth signs in (args after the two words; exit code). */
  readonly usersCreate: { readonly run: (args: ReadonlyArray<string>) => Promise<number>; readonly help: string }
}

// ---- flags ---------------------------------------------------------------------------------

interface FlagSpec {
  readonly type: "string" | "boolean"
  /** The environment variable read when the flag is not given (the flag wins). */
  readonly env?: string
  readonly value?: string
  readonly multiple?: boolean
  readonly help: string
}

type FlagSpecs = Readonly<Record<string, FlagSpec>>

const DATABASE: FlagSpec = {
  type: "string",
  env: "SLOTWISE_DATABASE_URL",
  value: "<file|url>",
  help: "a SQLite database file (created if missing) or a postgres:// (postgresql://) URL; default ./slotwise.db"
}

const SERVE_FLAGS = {
  port: { type: "string", env: "SLOTWISE_PORT", value: "<n>", help: "port to listen on (default 8080; 0 = any free port)" },
  host: { type: "string", env: "SLOTWISE_HOST", value: "<addr>", help: "address to bind (default 127.0.0.1; 0.0.0.0 = every interface)" },
  database: {
    ...DATABASE,
    help: `${DATABASE.help}. PostgreSQL may be shared by several instances; tables are created and migrated at start`
  },
  memory: { type: "boolean", env: "SLOTWISE_MEMORY", help: "keep everything in memory instead (lost on exit)" },
  redis: {
    type: "string",
    env: "SLOTWISE_REDIS_URL",
    value: "<url>",
    help: "keep rate-limit counters in Redis (redis://…), so limits hold across instances (default: in this process)"
  },
  "admin-token": {
    type: "string",
    env: "SLOTWISE_ADMIN_TOKEN",
    value: "<token>",
    help: "enable the operator API /admin/v1 with this bearer token (without one /admin/v1 is 404)"
  },
  "public-url": {
    type: "string",
    env: "SLOTWISE_PUBLIC_URL",
    value: "<url>",
    help: "the server's public base URL: manage links, hosted pages, calendar feed URLs and the OAuth issuer start with it " +
      "(default: the listening address; set it behind a proxy)"
  },
  "dns-server": {
    type: "string",
    env: "SLOTWISE_DNS_SERVER",
    value: "<host:port>",
    help: "the DNS resolver (an IP address, optional port) that verifies custom domains' TXT records (default: the system's)"
  },
  "trust-proxy": {
    type: "boolean",
    env: "SLOTWISE_TRUST_PROXY",
    help: "take the client address from X-Forwarded-For (per-IP limits); only behind a proxy that sets it"
  },
  "allow-private-webhooks": {
    type: "boolean",
    env: "SLOTWISE_ALLOW_PRIVATE_WEBHOOKS",
    help: "let webhook URLs resolve to private, loopback or link-local addresses, and deliver to them (development)"
  },
  "calendar-sync-minutes": {
    type: "string",
    env: "SLOTWISE_CALENDAR_SYNC_MINUTES",
    value: "<n>",
    help: "read each staff member's external calendar feed every n minutes (default 10); feeds on private addresses need --allow-private-webhooks too"
  },
  "webhook-timeout-ms": {
    type: "string",
    env: "SLOTWISE_WEBHOOK_TIMEOUT_MS",
    value: "<n>",
    help: "a delivery attempt that takes longer fails (default 10000)"
  },
  "webhook-lease-ms": {
    type: "string",
    env: "SLOTWISE_WEBHOOK_LEASE_MS",
    value: "<n>",
    help: "how long an attempt holds its delivery before another process (or this one after a crash) may send it again (default timeout + 20000; must exceed the timeout)"
  }
} as const satisfies FlagSpecs

const ACCOUNT_FIELDS = {
  name: { type: "string", value: "<name>", help: "the account's name" },
  plan: { type: "string", value: "<plan>", help: "free | pro | business" },
  "allowed-origin": {
    type: "string",
    multiple: true,
    value: "<origin>",
    help: "a web origin its publishable keys may be used from (https://shop.example.com); repeat for several"
  },
  "rate-limit": { type: "string", value: "<n>", help: "requests per minute, overriding the plan's figure" },
  handle: { type: "string", value: "<handle>", help: "its hosted page's slug, unique (default: from the name)" }
} as const satisfies FlagSpecs

/** Branding flags; an empty value clears the field. */
const BRANDING_FIELDS = {
  "display-name": { type: "string", value: "<name>", help: "the name hosted pages and the widget show (\"\" clears it)" },
  "logo-url": { type: "string", value: "<url>", help: "an https:// logo image (\"\" clears it)" },
  "primary-color": { type: "string", value: "<#rrggbb>", help: "the default primary colour, #rgb or #rrggbb (\"\" clears it)" },
  "hide-powered-by": { type: "string", value: "<true|false>", help: "hide \"Powered by Slotwise\" (pro and business)" }
} as const satisfies FlagSpecs

const JSON_FLAG: FlagSpec = { type: "boolean", help: "print JSON instead of text" }

const CREATE_FLAGS = {
  database: DATABASE,
  ...ACCOUNT_FIELDS,
  name: { ...ACCOUNT_FIELDS.name, help: "the account's name (required)" },
  plan: { ...ACCOUNT_FIELDS.plan, help: "free | pro | business (default free)" },
  json: { ...JSON_FLAG, help: "print {account, keys} as JSON" }
} as const satisfies FlagSpecs

const LIST_FLAGS = { database: DATABASE, json: { ...JSON_FLAG, help: "print the accounts as a JSON array" } } as const satisfies FlagSpecs

const UPDATE_FLAGS = {
  database: DATABASE,
  ...ACCOUNT_FIELDS,
  "allowed-origin": { ...ACCOUNT_FIELDS["allowed-origin"], help: `${ACCOUNT_FIELDS["allowed-origin"].help}; replaces the list` },
  "no-allowed-origins": { type: "boolean", help: "clear the allowed origins" },
  "rate-limit": { type: "string", value: "<n|plan>", help: "requests per minute; `plan` returns to the plan's figure" },
  ...BRANDING_FIELDS,
  json: { ...JSON_FLAG, help: "print the account as JSON" }
} as const satisfies FlagSpecs

const flagLines = (flags: FlagSpecs): string =>
  Object.entries(flags).map(([name, spec]) => {
    const head = `  --${name}${spec.value !== undefined ? ` ${spec.value}` : ""}`
    const env = spec.env !== undefined ? ` [$${spec.env}]` : ""
    return `${head.padEnd(30)} ${spec.help}${env}`
  }).join("\n")

class UsageError extends Error {}

/** Parses `args` against `flags`, then fills each flag not given from its environment variable. */
const parseFlags = <F extends FlagSpecs>(flags: F, args: ReadonlyArray<string>, env: NodeJS.ProcessEnv, positionals = false) => {
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
  for (const [name, spec] of Object.entries(flags)) {
    const fromEnv = spec.env === undefined ? undefined : env[spec.env]
    if (values[name] !== undefined || fromEnv === undefined || fromEnv === "") continue
    values[name] = spec.type === "boolean" ? booleanOf(spec.env!, fromEnv) : fromEnv
  }
  return { values: values as { readonly [K in keyof F]?: F[K] extends { multiple: true } ? Array<string> : F[K]["type"] extends "boolean" ? boolean : string } & { readonly help?: boolean }, positionals: parsed.positionals }
}

const booleanOf = (name: string, text: string): boolean => {
  if (/^(1|true|yes|on)$/i.test(text)) return true
  if (/^(0|false|no|off)$/i.test(text)) return false
  throw new UsageError(`$${name} must be true or false (1/0, yes/no), got ${text}`)
}

// ---- help ----------------------------------------------------------------------------------

const SERVE_HELP = `slotwise serve [options]: run the /v1 HTTP API

${flagLines(SERVE_FLAGS)}

Every option can be set by its environment variable [in brackets]; a flag given wins.
On first start with an empty database the server creates an account, prints its sandbox
secret and publishable keys once, and lets its publishable keys be used from the local
development origins it prints. It prints "listening on http://HOST:PORT" when ready.
GET / answers {name, version, docs, openapi, health} (browsers are sent to /docs).
SIGTERM or SIGINT: stop accepting, finish in-flight requests, let webhook attempts in
flight finish and record them, then close the database; a second signal exits at once.
`

const ACCOUNTS_CREATE_HELP = `slotwise accounts create --name <name> [options]: create an account offline and print its keys

${flagLines(CREATE_FLAGS)}
`

const ACCOUNTS_LIST_HELP = `slotwise accounts list [options]: list the accounts, with their plans and allowed origins

${flagLines(LIST_FLAGS)}
`

const ACCOUNTS_UPDATE_HELP = `slotwise accounts update <acc_…> [options]: change an account offline

${flagLines(UPDATE_FLAGS)}
`

const ACCOUNTS_HELP = `slotwise accounts <command>: accounts, offline (the server may be running)

Commands:
  create   create an account and print its keys (shown once)
  list     list the accounts
  update   change an account's name, plan, allowed origins or rate limit

Run slotwise accounts <command> --help for its options.
`

const usersHelp = (layers: CliLayers) => `slotwise users create [options]: create an account user (for OAuth sign-in) offline

${layers.usersCreate.help}`

const USAGE = `slotwise ${VERSION}: scheduling API server

Usage:
  slotwise serve [options]                  run the /v1 HTTP API
  slotwise accounts create [options]        create an account offline and print its keys
  slotwise accounts list [options]          list the accounts
  slotwise accounts update <acc_…> [opts]   change an account offline
  slotwise users create [options]           create an account user (for OAuth sign-in) offline
  slotwise <command> --help                 a command's options
  slotwise --help | --version

Every command opens --database, else $SLOTWISE_DATABASE_URL, else ./slotwise.db.
`

/** Everything: the usage and each command's options. */
const fullHelp = (layers: CliLayers) =>
  [USAGE, SERVE_HELP, ACCOUNTS_CREATE_HELP, ACCOUNTS_LIST_HELP, ACCOUNTS_UPDATE_HELP, usersHelp(layers)].join("\n")

// ---- serve ---------------------------------------------------------------------------------

export interface ServeFlags {
  readonly port: number
  readonly host: string
  readonly storage: StorageFlag
  readonly redis: string | undefined
  readonly adminToken: string | undefined
  readonly allowPrivateWebhooks: boolean
  readonly webhookTimeoutMs: number | undefined
  readonly webhookLeaseMs: number | undefined
  readonly trustProxy: boolean
  readonly publicUrl: string | undefined
  readonly dnsServer: string | undefined
  readonly calendarSyncMinutes: number | undefined
}

/** `host:port` of a resolver: an IPv4 address or a bracketed IPv6 one (node:dns takes no names). */
const dnsServerOf = (text: string | undefined): string | undefined => {
  if (text === undefined) return undefined
  if (!/^(\d{1,3}(\.\d{1,3}){3}|\[[0-9a-fA-F:.]+\])(:\d{1,5})?$/.test(text)) {
    throw new UsageError(`--dns-server must be an IP address with an optional port (127.0.0.1:53, [::1]:53), got ${text}`)
  }
  return text
}

const portOf = (text: string | undefined): number => {
  if (text === undefined) return 8080
  const port = Number(text)
  if (!/^\d+$/.test(text) || port > 65535) throw new UsageError(`--port must be 0–65535, got ${text}`)
  return port
}

const millisOf = (flag: string, text: string | undefined): number | undefined => {
  if (text === undefined) return undefined
  const ms = Number(text)
  if (!/^\d+$/.test(text) || ms < 1 || ms > 86_400_000) {
    throw new UsageError(`${flag} must be a whole number of milliseconds (1–86400000), got ${text}`)
  }
  return ms
}

const minutesOf = (flag: string, text: string | undefined): number | undefined => {
  if (text === undefined) return undefined
  const minutes = Number(text)
  if (!/^\d+(\.\d+)?$/.test(text) || !(minutes > 0) || minutes > 1440) {
    throw new UsageError(`${flag} must be a number of minutes above 0, at most 1440, got ${text}`)
  }
  return minutes
}

const publicUrlOf = (text: string | undefined): string | undefined => {
  if (text === undefined) return undefined
  if (!URL.canParse(text) || !/^https?:$/.test(new URL(text).protocol)) {
    throw new UsageError(`--public-url must be an http(s) URL, got ${text}`)
  }
  return text.replace(/\/+$/, "")
}

export const parseServe = (args: ReadonlyArray<string>, env: NodeJS.ProcessEnv): ServeFlags | "help" => {
  const { values } = parseFlags(SERVE_FLAGS, args, env)
  if (values.help) return "help"
  // Given together on the command line they contradict; --memory over $SLOTWISE_DATABASE_URL is a choice.
  if (args.includes("--memory") && args.some((a) => a === "--database" || a.startsWith("--database="))) {
    throw new UsageError("give --memory or --database, not both")
  }
  const webhookTimeoutMs = millisOf("--webhook-timeout-ms", values["webhook-timeout-ms"])
  const webhookLeaseMs = millisOf("--webhook-lease-ms", values["webhook-lease-ms"])
  if (webhookLeaseMs !== undefined && webhookLeaseMs <= (webhookTimeoutMs ?? 10_000)) {
    throw new UsageError(`--webhook-lease-ms must exceed the attempt timeout (${webhookTimeoutMs ?? 10_000} ms)`)
  }
  return {
    port: portOf(values.port),
    host: values.host ?? "127.0.0.1",
    storage: values.memory && !args.some((a) => a === "--database" || a.startsWith("--database="))
      ? "memory"
      : storageFlag(values.database, env),
    redis: values.redis,
    adminToken: values["admin-token"],
    allowPrivateWebhooks: values["allow-private-webhooks"] ?? false,
    webhookTimeoutMs,
    webhookLeaseMs,
    trustProxy: values["trust-proxy"] ?? false,
    publicUrl: publicUrlOf(values["public-url"]),
    dnsServer: dnsServerOf(values["dns-server"]),
    calendarSyncMinutes: minutesOf("--calendar-sync-minutes", values["calendar-sync-minutes"])
  }
}

const printKeys = (created: AccountWithKeys, write: (line: string) => void) => {
  write(`Created account ${created.account.id} (${created.account.name}, plan ${created.account.plan}).`)
  write("Its keys are shown now and never again:")
  write(`  sandbox secret key       ${created.keys.sandbox.secret}`)
  write(`  sandbox publishable key  ${created.keys.sandbox.publishable}`)
}

const SHUTDOWN_SIGNALS = ["SIGINT", "SIGTERM"] as const

/**
 * Under npm (`npm start`, `npx slotwise serve`) a shell sits between npm and this process,
 * and npm signals only the shell: a SIGTERM kills the shell and leaves this process running.
 * When the process that started this one is gone, stop as on SIGTERM.
 */
const stopWithLauncher = (env: NodeJS.ProcessEnv, log: (line: string) => void) => {
  if (env.npm_lifecycle_event === undefined || process.platform === "win32") return
  const launcher = process.ppid
  const watch = setInterval(() => {
    try {
      process.kill(launcher, 0)
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ESRCH") return
      clearInterval(watch)
      log(`the process that started this one (pid ${launcher}) has exited`)
      process.kill(process.pid, "SIGTERM")
    }
  }, 250)
  watch.unref()
}

const serve = (flags: ServeFlags, layers: CliLayers, env: NodeJS.ProcessEnv) => {
  const log = (line: string) => process.stdout.write(`${line}\n`)
  log(`slotwise ${VERSION} (pid ${process.pid}), node ${process.version}`)
  log(`storage: ${describeStorage(flags.storage)}`)
  log(`rate limits: ${flags.redis === undefined ? "counted in this process" : `Redis ${withoutPassword(flags.redis)}`}`)
  log(`operator API /admin/v1: ${flags.adminToken === undefined ? "off (no admin token)" : "on"}`)
  for (const signal of SHUTDOWN_SIGNALS) {
    process.once(signal, () => log(`received ${signal}: stopping; no new connections, finishing in-flight requests`))
  }
  stopWithLauncher(env, log)
  const layer = layers.server({
    port: flags.port,
    host: flags.host,
    storage: flags.storage,
    adminToken: flags.adminToken,
    trustProxy: flags.trustProxy,
    publicUrl: flags.publicUrl,
    dnsServer: flags.dnsServer,
    calendarSyncMinutes: flags.calendarSyncMinutes,
    allowPrivateWebhooks: flags.allowPrivateWebhooks,
    redis: flags.redis,
    webhooks: {
      ...(flags.webhookTimeoutMs !== undefined ? { timeoutMs: flags.webhookTimeoutMs } : {}),
      ...(flags.webhookLeaseMs !== undefined ? { leaseMs: flags.webhookLeaseMs } : {})
    },
    log,
    onFirstAccount: (created) => {
      printKeys(created, log)
      log("  (production keys: POST /v1/api-keys/exchange with the sandbox secret key)")
      if (created.account.allowed_origins.length > 0) {
        log(`Its publishable keys may be used from ${created.account.allowed_origins.join(", ")}`)
        log(`  (change them: slotwise accounts update ${created.account.id} --allowed-origin …, or PATCH /v1/account)`)
      }
    },
    onListening: (url) => {
      // Before "listening on": whoever waits for that line reads everything said at start.
      log(`public URL (the OAuth issuer): ${flags.publicUrl ?? url}; API reference: ${flags.publicUrl ?? url}/docs`)
      log(`listening on ${url}`)
    }
  })
  NodeRuntime.runMain(Layer.launch(layer).pipe(
    Effect.tapErrorCause((cause) =>
      Effect.sync(() => {
        if (Cause.isInterruptedOnly(cause)) return
        const error = Cause.squash(cause)
        process.stderr.write(
          `slotwise: cannot serve (${describeStorage(flags.storage)}): ${isSlotwiseFailure(error) ? error.detail : String((error as any)?.cause ?? error)}\n`
        )
      })
    )
  ), { disableErrorReporting: true })
}

// ---- accounts ------------------------------------------------------------------------------

/** Runs an `Accounts` use case on `storage`; prints its failure (naming the storage) and returns the exit code. */
const withAccounts = async <A>(
  storage: StorageFlag,
  layers: CliLayers,
  use: (accounts: Accounts) => Effect.Effect<A, unknown>,
  print: (value: A) => void
): Promise<number> => {
  const runtime = ManagedRuntime.make(layers.accounts(storage))
  try {
    const exit = await runtime.runPromiseExit(Effect.flatMap(Accounts, use))
    if (exit._tag === "Success") {
      print(exit.value)
      return 0
    }
    const error = Cause.squash(exit.cause)
    // An operator at the console sees a storage fault's own words (they name no secret).
    const detail = isSlotwiseFailure(error) ? error.detail : String((error as any)?.cause ?? error)
    process.stderr.write(`slotwise: ${detail} (${describeStorage(storage)})\n`)
    for (const e of isSlotwiseFailure(error) ? toProblem(error).errors ?? [] : []) process.stderr.write(`  ${e.path}: ${e.message}\n`)
    return 1
  } finally {
    await runtime.dispose()
  }
}

const rateLimitOf = (text: string): number | null => text === "plan" ? null : Number(text)

/** The account fields the flags set (an invalid value is left for the core's validation to report). */
const accountFields = (values: {
  readonly name?: string | undefined
  readonly plan?: string | undefined
  readonly "allowed-origin"?: Array<string> | undefined
  readonly "rate-limit"?: string | undefined
  readonly handle?: string | undefined
}) => ({
  ...(values.name !== undefined ? { name: values.name } : {}),
  ...(values.handle !== undefined ? { handle: values.handle } : {}),
  ...(values.plan !== undefined ? { plan: values.plan as "free" } : {}),
  ...(values["allowed-origin"] !== undefined ? { allowed_origins: values["allowed-origin"] } : {}),
  ...(values["rate-limit"] !== undefined ? { rate_limit_per_minute: rateLimitOf(values["rate-limit"]) } : {})
})

const clearable = (text: string | undefined) => (text === undefined ? {} : { value: text === "" ? null : text })

/** The branding the flags change, or nothing when none is given. */
const brandingFields = (values: { readonly [K in keyof typeof BRANDING_FIELDS]?: string | undefined }) => {
  const hide = values["hide-powered-by"]
  if (hide !== undefined && !/^(true|false)$/.test(hide)) throw new UsageError(`--hide-powered-by must be true or false, got ${hide}`)
  const entries = [
    ["display_name", clearable(values["display-name"])],
    ["logo_url", clearable(values["logo-url"])],
    ["primary_color", clearable(values["primary-color"])],
    ["hide_powered_by", hide === undefined ? {} : { value: hide === "true" }]
  ] as const
  const branding = Object.fromEntries(entries.flatMap(([field, given]) => ("value" in given ? [[field, given.value]] : [])))
  return Object.keys(branding).length === 0 ? {} : { branding }
}

const accountLine = (account: Account): string =>
  [
    account.id,
    JSON.stringify(account.name),
    `plan ${account.plan}`,
    `${account.limits.requests_per_minute}/min${account.rate_limit_per_minute === null ? "" : " (own figure)"}`,
    `origins ${account.allowed_origins.length === 0 ? "none" : account.allowed_origins.join(" ")}`,
    `handle ${account.handle}`
  ].join("  ")

const out = (text: string) => process.stdout.write(`${text}\n`)

const createAccount = (args: ReadonlyArray<string>, env: NodeJS.ProcessEnv, layers: CliLayers): Promise<number> | number => {
  const { values } = parseFlags(CREATE_FLAGS, args, env)
  if (values.help) return help(ACCOUNTS_CREATE_HELP)
  if (values.name === undefined) throw new UsageError("--name is required")
  const storage = storageFlag(values.database, env)
  return withAccounts(storage, layers, (accounts) => accounts.create({ plan: "free", ...accountFields(values), name: values.name! }), (created) => {
    if (values.json) return out(JSON.stringify(created, null, 2))
    out(`In ${describeStorage(storage)}:`)
    printKeys(created, out)
    out(`  production secret key    ${created.keys.production.secret}`)
    out(`  production publishable   ${created.keys.production.publishable}`)
  })
}

const listAccounts = (args: ReadonlyArray<string>, env: NodeJS.ProcessEnv, layers: CliLayers): Promise<number> | number => {
  const { values } = parseFlags(LIST_FLAGS, args, env)
  if (values.help) return help(ACCOUNTS_LIST_HELP)
  const storage = storageFlag(values.database, env)
  return withAccounts(storage, layers, (accounts) => accounts.list, (all) => {
    if (values.json) return out(JSON.stringify(all, null, 2))
    out(`${all.length === 0 ? "No accounts" : `${all.length} account(s)`} in ${describeStorage(storage)}${all.length === 0 ? "" : ":"}`)
    for (const account of all) out(`  ${accountLine(account)}`)
  })
}

const updateAccount = (args: ReadonlyArray<string>, env: NodeJS.ProcessEnv, layers: CliLayers): Promise<number> | number => {
  const { positionals, values } = parseFlags(UPDATE_FLAGS, args, env, true)
  if (values.help) return help(ACCOUNTS_UPDATE_HELP)
  const [id, ...extra] = positionals
  if (id === undefined || extra.length > 0) throw new UsageError("give one account id: slotwise accounts update <acc_…> [options]")
  if (values["no-allowed-origins"] && values["allowed-origin"] !== undefined) {
    throw new UsageError("give --allowed-origin or --no-allowed-origins, not both")
  }
  const patch = { ...accountFields(values), ...brandingFields(values), ...(values["no-allowed-origins"] ? { allowed_origins: [] } : {}) }
  if (Object.keys(patch).length === 0) {
    throw new UsageError("nothing to change: give --name, --handle, --plan, --allowed-origin, --no-allowed-origins, --rate-limit or a branding option")
  }
  const storage = storageFlag(values.database, env)
  return withAccounts(storage, layers, (accounts) => accounts.update(id, patch), (account) => {
    if (values.json) return out(JSON.stringify(account, null, 2))
    out(`Updated in ${describeStorage(storage)}:`)
    out(`  ${accountLine(account)}`)
  })
}

const help = (text: string): number => {
  process.stdout.write(text)
  return 0
}

/** Runs the command line; `serve` keeps the process alive until a signal. */
export const main = async (args: ReadonlyArray<string>, env: NodeJS.ProcessEnv, layers: CliLayers): Promise<void> => {
  const [command, sub, ...rest] = args
  const wantsHelp = (word: string | undefined) => word === undefined || word === "--help" || word === "-h" || word === "help"
  try {
    if (command === undefined || command === "--help" || command === "-h" || command === "help") {
      process.stdout.write(fullHelp(layers))
      return
    }
    if (command === "--version" || command === "-v") {
      process.stdout.write(`${VERSION}\n`)
      return
    }
    if (command === "serve") {
      const flags = parseServe(args.slice(1), env)
      if (flags === "help") process.stdout.write(SERVE_HELP)
      else serve(flags, layers, env)
      return
    }
    if (command === "accounts") {
      if (wantsHelp(sub)) process.exitCode = help(ACCOUNTS_HELP)
      else if (sub === "create") process.exitCode = await createAccount(rest, env, layers)
      else if (sub === "list") process.exitCode = await listAccounts(rest, env, layers)
      else if (sub === "update") process.exitCode = await updateAccount(rest, env, layers)
      else throw new UsageError(`unknown command: accounts ${sub}`)
      return
    }
    if (command === "users") {
      if (wantsHelp(sub)) process.exitCode = help(usersHelp(layers))
      else if (sub === "create") process.exitCode = await layers.usersCreate.run(rest)
      else throw new UsageError(`unknown command: users ${sub}`)
      return
    }
    throw new UsageError(`unknown command: ${args.join(" ")}`)
  } catch (error) {
    if (error instanceof UsageError || (error as any)?.code?.startsWith?.("ERR_PARSE_ARGS")) {
      process.stderr.write(`slotwise: ${(error as Error).message}\nRun slotwise ${command === undefined ? "" : `${command} `}--help for usage.\n`)
      process.exitCode = 2
      return
    }
    throw error
  }
}
