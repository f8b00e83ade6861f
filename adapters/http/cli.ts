/**
 * The `slotwise` command line: `serve` runs the HTTP server, `accounts create` creates an
 * account offline. It parses flags into options; the layers come from the composition root
 * (main.ts passes compose.ts's builders in).
 */
import { NodeRuntime } from "@effect/platform-node"
import { Cause, Effect, Layer, ManagedRuntime } from "effect"
import { parseArgs } from "node:util"
import { Accounts } from "../../src/Accounts.js"
import type { AccountWithKeys } from "../../src/domain/account.js"
import { isSlotwiseFailure, toProblem } from "../../src/domain/errors.js"
import { VERSION } from "./api.js"
import type { AppOptions } from "./app.js"
import type { ServeOptions } from "./server.js"

/** The storage the flags name: a `--database` value is a SQLite file or a `postgres://` URL. */
export type StorageFlag = "memory" | { readonly sqlite: string } | { readonly postgres: string }

const storageOf = (location: string): StorageFlag =>
  /^postgres(ql)?:\/\//i.test(location) ? { postgres: location } : { sqlite: location }

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

const helpText = (layers: CliLayers) => `${HELP}\n${layers.usersCreate.help}`

const HELP = `slotwise ${VERSION}: scheduling API server

Usage:
  slotwise serve [options]            run the /v1 HTTP API
  slotwise accounts create [options]  create an account offline and print its keys
  slotwise users create [options]     create an account user (for OAuth sign-in) offline
  slotwise --help | --version

serve options:
  --port <n>                 port to listen on (default 8080; 0 = any free port)
  --host <addr>              address to bind (default 127.0.0.1)
  --database <file|url>      SQLite database file, created if missing, or a postgres://
                             (postgresql://) URL: PostgreSQL, which several instances may
                             share; tables are created and migrated at start
                             (default: $SLOTWISE_DATABASE_URL, else ./slotwise.db)
  --redis <url>              keep rate-limit counters in Redis (redis://…), so limits hold
                             across instances (default: $SLOTWISE_REDIS_URL; else in memory)
  --memory                   keep everything in memory instead (lost on exit)
  --admin-token <token>      enable the operator API /admin/v1 with this bearer token
                             (default: $SLOTWISE_ADMIN_TOKEN; without one /admin/v1 is 404)
  --allow-private-webhooks   let webhook URLs resolve to private, loopback or link-local
                             addresses, and deliver to them (development only)
  --webhook-timeout-ms <n>   a delivery attempt that takes longer fails (default 10000)
  --calendar-sync-minutes <n>  read each external calendar feed every n minutes (default
                             $SLOTWISE_CALENDAR_SYNC_MINUTES, else 10); feeds on private
                             addresses need --allow-private-webhooks too
  --webhook-lease-ms <n>     how long an attempt holds its delivery before another process,
                             or this one after a crash, may send it again (default timeout
                             + 20000; must exceed the timeout)
  --trust-proxy              take the client address from X-Forwarded-For (for per-IP limits)
  --public-url <url>         the server's public base URL, the OAuth issuer (default: the
                             listening address; set it behind a proxy or load balancer)
  --dns-server <host:port>   the DNS resolver that verifies custom domains' TXT records
                             (default: $SLOTWISE_DNS_SERVER, else the system's resolvers)

  On first start with an empty database the server creates an account and prints its
  sandbox secret and publishable keys, once. It prints "listening on http://HOST:PORT"
  when ready. It delivers webhooks while it runs (several servers on one database share the
  work). SIGTERM/SIGINT: stop accepting, finish in-flight requests, let webhook attempts in
  flight finish and record them, then close the database.

accounts create options:
  --database <file|url>      SQLite database file or postgres:// URL
                             (default: $SLOTWISE_DATABASE_URL, else ./slotwise.db)
  --name <name>              account name (required)
  --plan <plan>              free | pro | business (default free)
  --allowed-origin <origin>  an origin for publishable keys; repeat for several
  --rate-limit <n>           requests per minute, overriding the plan's figure
  --json                     print {account, keys} as JSON (default: readable text)
`

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

class UsageError extends Error {}

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
  const { values } = parseArgs({
    args: [...args],
    strict: true,
    options: {
      port: { type: "string" },
      host: { type: "string" },
      database: { type: "string" },
      redis: { type: "string" },
      memory: { type: "boolean" },
      "admin-token": { type: "string" },
      "allow-private-webhooks": { type: "boolean" },
      "webhook-timeout-ms": { type: "string" },
      "webhook-lease-ms": { type: "string" },
      "trust-proxy": { type: "boolean" },
      "public-url": { type: "string" },
      "dns-server": { type: "string" },
      "calendar-sync-minutes": { type: "string" },
      help: { type: "boolean", short: "h" }
    }
  })
  if (values.help) return "help"
  if (values.memory && values.database !== undefined) throw new UsageError("give --memory or --database, not both")
  const database = values.database ?? (env.SLOTWISE_DATABASE_URL || undefined)
  const webhookTimeoutMs = millisOf("--webhook-timeout-ms", values["webhook-timeout-ms"])
  const webhookLeaseMs = millisOf("--webhook-lease-ms", values["webhook-lease-ms"])
  if (webhookLeaseMs !== undefined && webhookLeaseMs <= (webhookTimeoutMs ?? 10_000)) {
    throw new UsageError(`--webhook-lease-ms must exceed the attempt timeout (${webhookTimeoutMs ?? 10_000} ms)`)
  }
  return {
    port: portOf(values.port),
    host: values.host ?? "127.0.0.1",
    storage: values.memory ? "memory" : storageOf(database ?? "./slotwise.db"),
    redis: values.redis ?? (env.SLOTWISE_REDIS_URL || undefined),
    adminToken: values["admin-token"] ?? (env.SLOTWISE_ADMIN_TOKEN || undefined),
    allowPrivateWebhooks: values["allow-private-webhooks"] ?? false,
    webhookTimeoutMs,
    webhookLeaseMs,
    trustProxy: values["trust-proxy"] ?? false,
    publicUrl: publicUrlOf(values["public-url"] ?? (env.SLOTWISE_PUBLIC_URL || undefined)),
    dnsServer: dnsServerOf(values["dns-server"] ?? (env.SLOTWISE_DNS_SERVER || undefined)),
    calendarSyncMinutes: minutesOf(
      "--calendar-sync-minutes",
      values["calendar-sync-minutes"] ?? (env.SLOTWISE_CALENDAR_SYNC_MINUTES || undefined)
    )
  }
}

const printKeys = (created: AccountWithKeys, write: (line: string) => void) => {
  write(`Created account ${created.account.id} (${created.account.name}, plan ${created.account.plan}).`)
  write("Its keys are shown now and never again:")
  write(`  sandbox secret key       ${created.keys.sandbox.secret}`)
  write(`  sandbox publishable key  ${created.keys.sandbox.publishable}`)
}

const serve = (flags: ServeFlags, layers: CliLayers) => {
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
    onFirstAccount: (created) => {
      printKeys(created, (line) => process.stdout.write(`${line}\n`))
      process.stdout.write("  (production keys: POST /v1/api-keys/exchange with the sandbox secret key)\n")
    },
    onListening: (url) => process.stdout.write(`listening on ${url}\n`)
  })
  NodeRuntime.runMain(Layer.launch(layer).pipe(
    Effect.tapErrorCause((cause) =>
      Effect.sync(() => {
        const error = Cause.squash(cause)
        process.stderr.write(`slotwise: cannot serve: ${isSlotwiseFailure(error) ? error.detail : String((error as any)?.cause ?? error)}\n`)
      })
    )
  ), { disableErrorReporting: true })
}

const createAccount = async (args: ReadonlyArray<string>, env: NodeJS.ProcessEnv, layers: CliLayers): Promise<number> => {
  const { values } = parseArgs({
    args: [...args],
    strict: true,
    options: {
      database: { type: "string" },
      name: { type: "string" },
      plan: { type: "string" },
      "allowed-origin": { type: "string", multiple: true },
      "rate-limit": { type: "string" },
      json: { type: "boolean" },
      help: { type: "boolean", short: "h" }
    }
  })
  if (values.help) {
    process.stdout.write(HELP)
    return 0
  }
  if (values.name === undefined) throw new UsageError("--name is required")
  const runtime = ManagedRuntime.make(layers.accounts(storageOf(values.database ?? (env.SLOTWISE_DATABASE_URL || "./slotwise.db"))))
  try {
    const exit = await runtime.runPromiseExit(Effect.flatMap(Accounts, (accounts) =>
      accounts.create({
        name: values.name!,
        plan: (values.plan ?? "free") as "free",
        ...(values["allowed-origin"] !== undefined ? { allowed_origins: values["allowed-origin"] } : {}),
        ...(values["rate-limit"] !== undefined ? { rate_limit_per_minute: Number(values["rate-limit"]) } : {})
      })))
    if (exit._tag === "Failure") {
      const error = Cause.squash(exit.cause)
      const problem = isSlotwiseFailure(error) ? toProblem(error) : undefined
      process.stderr.write(`slotwise: ${problem?.detail ?? String(error)}\n`)
      for (const e of problem?.errors ?? []) process.stderr.write(`  ${e.path}: ${e.message}\n`)
      return 1
    }
    if (values.json) process.stdout.write(`${JSON.stringify(exit.value, null, 2)}\n`)
    else {
      printKeys(exit.value, (line) => process.stdout.write(`${line}\n`))
      process.stdout.write(`  production secret key    ${exit.value.keys.production.secret}\n`)
      process.stdout.write(`  production publishable   ${exit.value.keys.production.publishable}\n`)
    }
    return 0
  } finally {
    await runtime.dispose()
  }
}

/** Runs the command line; `serve` keeps the process alive until a signal. */
export const main = async (args: ReadonlyArray<string>, env: NodeJS.ProcessEnv, layers: CliLayers): Promise<void> => {
  try {
    const [command, ...rest] = args
    if (command === undefined || command === "--help" || command === "-h" || command === "help") {
      process.stdout.write(helpText(layers))
      return
    }
    if (command === "--version" || command === "-v") {
      process.stdout.write(`${VERSION}\n`)
      return
    }
    if (command === "serve") {
      const flags = parseServe(rest, env)
      if (flags === "help") process.stdout.write(helpText(layers))
      else serve(flags, layers)
      return
    }
    if (command === "accounts" && rest[0] === "create") {
      process.exitCode = await createAccount(rest.slice(1), env, layers)
      return
    }
    if (command === "users" && rest[0] === "create") {
      process.exitCode = await layers.usersCreate.run(rest.slice(1))
      return
    }
    throw new UsageError(`unknown command: ${args.join(" ")}`)
  } catch (error) {
    if (error instanceof UsageError || (error as any)?.code?.startsWith?.("ERR_PARSE_ARGS")) {
      process.stderr.write(`slotwise: ${(error as Error).message}\nRun slotwise --help for usage.\n`)
      process.exitCode = 2
      return
    }
    throw error
  }
}
