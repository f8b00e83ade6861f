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
} from "./accounts.js"
import { didYouMean, isParseError, refuseUnknownFlags, UsageError } from "./flags.js"
import { KEYS_COMMANDS, KEYS_CREATE_HELP, KEYS_HELP, KEYS_LIST_HELP, KEYS_REVOKE_HELP, keysCommand } from "./keys.js"
import { type OfflineLayer, printHelp } from "./offline.js"
import { startFailure, tryPort } from "./start.js"
import { describeStorage, type StorageFlag, withoutPassword } from "./storage.js"
import { parseServe, SERVE_HELP, type ServeFlags } from "./serveFlags.js"
import { VERSION } from "../http/api.js"
import type { AppOptions } from "../http/app.js"
import type { ServeOptions } from "../http/server.js"

export { DEFAULT_DATABASE, describeStorage, type StorageFlag, storageFlag, withoutPassword } from "./storage.js"

/** The layers the command line runs, from the composition root. */
export interface CliLayers {
  readonly server: (
    options: ServeOptions & AppOptions & {
      readonly storage: StorageFlag
      readonly allowPrivateWebhooks: boolean
      readonly redis: string | undefined
      readonly webhooks: { readonly timeoutMs?: number; readonly leaseMs?: number }
      readonly dnsServer: string | undefined
      readonly calendarSyncMinutes: number | undefined
      readonly storageStart: { readonly log: (line: string) => void; readonly waitMs: number | undefined }
    }
  ) => Layer.Layer<never, unknown>
  /** The accounts and keys commands' services on a storage. */
  readonly accounts: OfflineLayer
  /** `users create`: the account users OAuth signs in (args after the two words; exit code). */
  readonly usersCreate: { readonly run: (args: ReadonlyArray<string>) => Promise<number>; readonly help: string }
}

// ---- help ----------------------------------------------------------------------------------

const usersHelp = (layers: CliLayers) =>
  `slotwise users create [options]: create an account user (for OAuth sign-in) offline

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
  [
    USAGE,
    SERVE_HELP,
    ACCOUNTS_CREATE_HELP,
    ACCOUNTS_LIST_HELP,
    ACCOUNTS_UPDATE_HELP,
    KEYS_CREATE_HELP,
    KEYS_LIST_HELP,
    KEYS_REVOKE_HELP,
    usersHelp(layers)
  ]
    .join("\n")

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
  NodeRuntime.runMain(
    Layer.launch(layer).pipe(
      Effect.tapErrorCause((cause) =>
        Effect.sync(() => {
          if (Cause.isInterruptedOnly(cause)) return
          process.stderr.write(`slotwise: ${startFailure(Cause.squash(cause), flags)}\n`)
        })
      )
    ),
    { disableErrorReporting: true }
  )
}

/** Each command's sub-commands and their help ("" for a command that has none). */
const commandsOf = (layers: CliLayers) =>
  ({
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
