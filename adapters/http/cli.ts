/**
 * The `slotwise` command line: `serve` runs the HTTP server; `accounts create | list |
 * update` and `keys create | list | revoke` work on the database offline. It parses flags
 * (each with its environment variable; adapters/cli/flags.ts) into options; the layers come
 * from the composition root (main.ts passes compose.ts's builders in).
 */
import { NodeRuntime } from "@effect/platform-node"
import { Cause, Effect, Layer } from "effect"
import {
  ACCOUNTS_COMMANDS,
  ACCOUNTS_CREATE_HELP,
  ACCOUNTS_HELP,
  ACCOUNTS_LIST_HELP,
  ACCOUNTS_UPDATE_HELP,
  accountsCommand,
  printKeys
} from "../cli/accounts.js"
import { didYouMean, flagLines, type FlagSpecs, isParseError, parseFlags, refuseUnknownFlags, UsageError } from "../cli/flags.js"
import { KEYS_COMMANDS, KEYS_CREATE_HELP, KEYS_HELP, KEYS_LIST_HELP, KEYS_REVOKE_HELP, keysCommand } from "../cli/keys.js"
import { type OfflineLayer, printHelp } from "../cli/offline.js"
import { startFailure, tryPort } from "../cli/start.js"
import { DATABASE, describeStorage, type StorageFlag, storageFlag, withoutPassword } from "../cli/storage.js"
import { VERSION } from "./api.js"
import type { AppOptions } from "./app.js"
import type { ServeOptions } from "./server.js"
import { withoutTrailingSlash } from "../../src/ports/trailingSlash.js"

export { DEFAULT_DATABASE, describeStorage, type StorageFlag, storageFlag, withoutPassword } from "../cli/storage.js"

/** The layers the command line runs, from the composition root. */
export interface CliLayers {
  readonly server: (options: ServeOptions & AppOptions & {
    readonly storage: StorageFlag
    readonly allowPrivateWebhooks: boolean
    readonly redis: string | undefined
    readonly webhooks: { readonly timeoutMs?: number; readonly leaseMs?: number }
    readonly dnsServer: string | undefined
    readonly calendarSyncMinutes: number | undefined
    readonly storageStart: { readonly log: (line: string) => void; readonly waitMs: number | undefined }
  }) => Layer.Layer<never, unknown>
  /** The accounts and keys commands' services on a storage. */
  readonly accounts: OfflineLayer
  /** `users create`: the account users OAuth signs in (args after the two words; exit code). */
  readonly usersCreate: { readonly run: (args: ReadonlyArray<string>) => Promise<number>; readonly help: string }
}

// ---- flags ---------------------------------------------------------------------------------

const SERVE_FLAGS = {
  port: { type: "string", env: "SLOTWISE_PORT", value: "<n>", help: "port to listen on (default 8080; 0 = any free port)" },
  host: { type: "string", env: "SLOTWISE_HOST", value: "<addr>", help: "address to bind (default 127.0.0.1; 0.0.0.0 = every interface)" },
  database: {
    ...DATABASE,
    help: `${DATABASE.help}. PostgreSQL may be shared by several instances; tables are created and migrated at start`
  },
  "database-wait-seconds": {
    type: "string",
    env: "SLOTWISE_DATABASE_WAIT_SECONDS",
    value: "<n>",
    help: "how long start-up keeps trying a PostgreSQL server it cannot reach before it gives up (default 30; 0 = try once)"
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

const usersHelp = (layers: CliLayers) => `slotwise users create [options]: create an account user (for OAuth sign-in) offline

${layers.usersCreate.help}`

const USAGE = `slotwise ${VERSION}: scheduling API server

Usage:
  slotwise serve [options]                  run the /v1 HTTP API
  slotwise accounts create [options]        create an account offline and print its keys
  slotwise accounts list [options]          list the accounts
  slotwise accounts update <acc_…> [opts]   change an account offline
  slotwise keys create --account <acc_…>    create an API key offline and print its secret (shown once)
  slotwise keys list --account <acc_…>      list an account's API keys (never their secrets)
  slotwise keys revoke <key_…>              revoke an API key
  slotwise users create [options]           create an account user (for OAuth sign-in) offline
  slotwise <command> --help                 a command's options
  slotwise --help | --version

Every command opens --database, else $SLOTWISE_DATABASE_URL, else ./slotwise.db.
`

/** Everything: the usage and each command's options. */
const fullHelp = (layers: CliLayers) =>
  [USAGE, SERVE_HELP, ACCOUNTS_CREATE_HELP, ACCOUNTS_LIST_HELP, ACCOUNTS_UPDATE_HELP, KEYS_CREATE_HELP, KEYS_LIST_HELP, KEYS_REVOKE_HELP, usersHelp(layers)]
    .join("\n")

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
  readonly databaseWaitMs: number | undefined
}

/** `host:port` of a resolver: an IPv4 address or a bracketed IPv6 one (node:dns takes no names). */
const dnsServerOf = (source: string, text: string | undefined): string | undefined => {
  if (text === undefined) return undefined
  if (!/^(\d{1,3}(\.\d{1,3}){3}|\[[0-9a-fA-F:.]+\])(:\d{1,5})?$/.test(text)) {
    throw new UsageError(`${source} must be an IP address with an optional port (127.0.0.1:53, [::1]:53), got ${text}`)
  }
  return text
}

const portOf = (source: string, text: string | undefined): number => {
  if (text === undefined) return 8080
  const port = Number(text)
  if (!/^\d+$/.test(text) || port > 65535) throw new UsageError(`${source} must be a port number, 0–65535, got ${text}`)
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

const secondsOf = (source: string, text: string | undefined): number | undefined => {
  if (text === undefined) return undefined
  if (!/^\d+$/.test(text) || Number(text) > 3600) throw new UsageError(`${source} must be a whole number of seconds, 0–3600, got ${text}`)
  return Number(text)
}

const publicUrlOf = (source: string, text: string | undefined): string | undefined => {
  if (text === undefined) return undefined
  if (!URL.canParse(text) || !/^https?:$/.test(new URL(text).protocol)) {
    throw new UsageError(`${source} must be an http(s) URL, got ${text}`)
  }
  return withoutTrailingSlash(text)
}

export const parseServe = (args: ReadonlyArray<string>, env: NodeJS.ProcessEnv): ServeFlags | "help" => {
  const { values, source } = parseFlags(SERVE_FLAGS, args, env)
  if (values.help) return "help"
  // Given together on the command line they contradict; --memory over $SLOTWISE_DATABASE_URL is a choice.
  if (args.includes("--memory") && args.some((a) => a === "--database" || a.startsWith("--database="))) {
    throw new UsageError("give --memory or --database, not both")
  }
  const webhookTimeoutMs = millisOf(source("webhook-timeout-ms"), values["webhook-timeout-ms"])
  const webhookLeaseMs = millisOf(source("webhook-lease-ms"), values["webhook-lease-ms"])
  if (webhookLeaseMs !== undefined && webhookLeaseMs <= (webhookTimeoutMs ?? 10_000)) {
    throw new UsageError(`${source("webhook-lease-ms")} must exceed the attempt timeout (${webhookTimeoutMs ?? 10_000} ms)`)
  }
  return {
    port: portOf(source("port"), values.port),
    host: values.host ?? "127.0.0.1",
    storage: values.memory && !args.some((a) => a === "--database" || a.startsWith("--database="))
      ? "memory"
      : storageFlag(values.database, env, source("database")),
    redis: values.redis,
    adminToken: values["admin-token"],
    allowPrivateWebhooks: values["allow-private-webhooks"] ?? false,
    webhookTimeoutMs,
    webhookLeaseMs,
    trustProxy: values["trust-proxy"] ?? false,
    publicUrl: publicUrlOf(source("public-url"), values["public-url"]),
    dnsServer: dnsServerOf(source("dns-server"), values["dns-server"]),
    calendarSyncMinutes: minutesOf(source("calendar-sync-minutes"), values["calendar-sync-minutes"]),
    databaseWaitMs: ((seconds) => (seconds === undefined ? undefined : seconds * 1000))(secondsOf(source("database-wait-seconds"), values["database-wait-seconds"]))
  }
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

const serve = async (flags: ServeFlags, layers: CliLayers, env: NodeJS.ProcessEnv) => {
  const taken = await tryPort(flags)
  if (taken !== undefined) {
    process.stderr.write(`slotwise: ${startFailure(taken, flags)}\n`)
    process.exitCode = 1
    return
  }
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
    // Opening storage reports on stderr: a PostgreSQL it cannot reach (at once, then while it retries), migrating.
    storageStart: { log: (line) => process.stderr.write(`slotwise: ${line}\n`), waitMs: flags.databaseWaitMs },
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
        process.stderr.write(`slotwise: ${startFailure(Cause.squash(cause), flags)}\n`)
      })
    )
  ), { disableErrorReporting: true })
}

/** Each command's sub-commands and their help ("" for a command that has none). */
const commandsOf = (layers: CliLayers) => ({
  accounts: { help: ACCOUNTS_HELP, subs: ACCOUNTS_COMMANDS },
  keys: { help: KEYS_HELP, subs: KEYS_COMMANDS },
  users: { help: usersHelp(layers), subs: ["create"] }
}) as const satisfies Record<string, { readonly help: string; readonly subs: ReadonlyArray<string> }>

/** The options `users create` takes, read off its help (it parses its own). */
const usersCreateFlags = (layers: CliLayers) => [...layers.usersCreate.help.matchAll(/^\s+--([a-z-]+)/gm)].map((m) => m[1]!)

const runSub = (command: string, sub: string, rest: ReadonlyArray<string>, env: NodeJS.ProcessEnv, layers: CliLayers) => {
  if (command === "keys") return keysCommand(sub, rest, env, layers.accounts)!
  if (command === "users") {
    refuseUnknownFlags(usersCreateFlags(layers), rest)
    return layers.usersCreate.run(rest)
  }
  return accountsCommand(sub, rest, env, layers.accounts)
}

/** Runs the command line; `serve` keeps the process alive until a signal. */
export const main = async (args: ReadonlyArray<string>, env: NodeJS.ProcessEnv, layers: CliLayers): Promise<void> => {
  const [command, sub, ...rest] = args
  const wantsHelp = (word: string | undefined) => word === undefined || word === "--help" || word === "-h" || word === "help"
  // Where a usage error sends the user: the help of the deepest command named that exists.
  let helpOf = "slotwise --help"
  try {
    if (wantsHelp(command)) {
      process.stdout.write(fullHelp(layers))
      return
    }
    if (command === "--version" || command === "-v") {
      process.stdout.write(`${VERSION}\n`)
      return
    }
    const commands = commandsOf(layers)
    if (command === "serve") {
      helpOf = "slotwise serve --help"
      const flags = parseServe(args.slice(1), env)
      if (flags === "help") process.stdout.write(SERVE_HELP)
      else await serve(flags, layers, env)
      return
    }
    if (command!.startsWith("-")) throw new UsageError(`${command} is not a command; options follow one (slotwise serve ${command} …)`)
    if (!Object.hasOwn(commands, command!)) {
      throw new UsageError(`unknown command: ${command}${didYouMean(command!, ["serve", ...Object.keys(commands)])}`)
    }
    const { help: commandHelp, subs } = commands[command as keyof typeof commands]
    helpOf = `slotwise ${command} --help`
    if (wantsHelp(sub)) {
      process.exitCode = printHelp(commandHelp)
      return
    }
    if (!(subs as ReadonlyArray<string>).includes(sub!)) {
      throw new UsageError(`unknown command: ${command} ${sub}${didYouMean(sub!, subs, (s) => `${command} ${s}`)}`)
    }
    helpOf = `slotwise ${command} ${sub} --help`
    process.exitCode = await runSub(command!, sub!, rest, env, layers)
  } catch (error) {
    if (error instanceof UsageError || isParseError(error)) {
      process.stderr.write(`slotwise: ${(error as Error).message}\nRun ${helpOf} for usage.\n`)
      process.exitCode = 2
      return
    }
    throw error
  }
}
