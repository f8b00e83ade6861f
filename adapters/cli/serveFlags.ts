/** `slotwise serve`'s flags, each with its environment variable, and its help. */
import { flagLines, type FlagSpecs, parseFlags, UsageError } from "./flags.js"
import { DATABASE, type StorageFlag, storageFlag } from "./storage.js"
import { withoutTrailingSlash } from "../../src/ports/trailingSlash.js"

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
    help:
      "read each staff member's external calendar feed every n minutes (default 10); feeds on private addresses need --allow-private-webhooks too"
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
    help:
      "how long an attempt holds its delivery before another process (or this one after a crash) may send it again (default timeout + 20000; must exceed the timeout)"
  }
} as const satisfies FlagSpecs

export const SERVE_HELP = `slotwise serve [options]: run the /v1 HTTP API

${flagLines(SERVE_FLAGS)}

Every option can be set by its environment variable [in brackets]; a flag given wins.
On first start with an empty database the server creates an account, prints its sandbox
secret and publishable keys once, and lets its publishable keys be used from the local
development origins it prints. It prints "listening on http://HOST:PORT" when ready.
GET / answers {name, version, docs, openapi, health} (browsers are sent to /docs).
SIGTERM or SIGINT: stop accepting, finish in-flight requests, let webhook attempts in
flight finish and record them, then close the database; a second signal exits at once.
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
    databaseWaitMs: ((seconds) => (seconds === undefined ? undefined : seconds * 1000))(
      secondsOf(source("database-wait-seconds"), values["database-wait-seconds"])
    )
  }
}
