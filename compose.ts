/**
 * The composition root: the one place that picks adapters and wires them to the core. The
 * package root (index.ts), the server (`slotwise serve`, main.ts) and the mounted handlers
 * all build their layers here. Adapters never build one another's layers; they share only
 * helpers (adapters/sql beneath both SQL stores, adapters/cli beneath the server's commands,
 * the client-address reader of adapters/http beneath the OAuth sign-in).
 *
 * - storage: `"memory"`, `{ sqlite: file }` or `{ postgres: url }`, one case each in
 *   `storageLayer` (`storageFromLocation` reads a `--database` value);
 * - webhooks: the URL policy (private addresses, DNS at registration) and the dispatcher,
 *   which on in-memory storage is woken by every commit and does not poll, and on PostgreSQL
 *   is also woken by other instances' commits (LISTEN/NOTIFY), polling only as a fallback;
 * - rate limits: the counters' store, in this process unless Redis (`redis: url`) or another
 *   shared store layer is given. While Redis is unreachable API requests are admitted
 *   unmetered, but sign-in attempts are counted in this process: throttling against
 *   password guessing never fails open;
 * - calendar feeds: read under the webhook address guard (one rule for every outbound
 *   request), every `calendarSyncMinutes`, by a sync loop in each process that runs one;
 * - custom domains: TXT lookups on node:dns (the `dnsServer` given, else the system's
 *   resolvers), and the server's own public host, which no account may claim;
 * - calendar feeds: written by ical-generator;
 * - the public URL every link starts with (manage links, hosted pages, calendar feed URLs):
 *   `--public-url`, else the listening address (a mounted handler: its OAuth issuer), else
 *   `http://127.0.0.1:8080`; a verified custom domain replaces it for manage links and pages;
 * - reminders: a worker in every instance fires due `booking.reminder` events.
 */
import { Effect, Layer } from "effect"
import type { ParsePoolOptions } from "./adapters/calendars/parseWorker.js"
import { FeedReaderLive } from "./adapters/calendars/reader.js"
import { CalendarSyncLoopLive, type CalendarSyncLoopOptions } from "./adapters/calendars/syncLoop.js"
import { DnsResolverLive } from "./adapters/dns/resolver.js"
import { RecurrenceExpanderLive } from "./adapters/ical/recurrence.js"
import { CalendarRendererLive } from "./adapters/ical/renderer.js"
import { AccessLive } from "./adapters/http/app.js"
import { makeHttpHandler, type MountOptions, type SlotwiseHttpHandler } from "./adapters/http/mount.js"
import { makeServerLayer, type ServeOptions } from "./adapters/http/server.js"
import { NodeManageLinkMacLive } from "./adapters/crypto/manageLinkMac.js"
import { makeMemoryRateLimitStore, MemoryRateLimitStoreLive } from "./adapters/memory/ratelimit.js"
import { MemoryStorageLive } from "./adapters/memory/storage.js"
import { makeOAuthHandler } from "./adapters/oauth/server.js"
import { OAuthServicesLive } from "./adapters/oauth/services.js"
import type { PostgresStorageOptions } from "./adapters/postgres/layer.js"
import type { RedisRateLimitStoreOptions } from "./adapters/redis/ratelimit.js"
import type { SqliteStorageOptions } from "./adapters/sqlite/layer.js"
import type { StorageChoice } from "./schedulingOptions.js"
import { ReminderWorkerLive } from "./adapters/reminders/worker.js"
import { WebhookDispatcherLive, type WebhookDispatcherOptions } from "./adapters/webhooks/dispatcher.js"
import { guardedLookup, type Resolver, systemResolver, WebhookPolicyLive } from "./adapters/webhooks/guard.js"
import { authenticatorLayer } from "./src/auth/Authenticator.js"
import { CalendarSyncSettings, DEFAULT_SYNC_INTERVAL_MS, DEFAULT_SYNC_LEASE_MS } from "./src/calendars/Calendars.js"
import { oauthAccessTokenCredentials } from "./src/oauth/OAuthGrants.js"
import type { StorageFailure } from "./src/domain/errors.js"
import { DomainSettings } from "./src/domains/Domains.js"
import type { Events } from "./src/events/Events.js"
import { CoreLive } from "./src/layers.js"
import { DEFAULT_PUBLIC_URL, fixedPublicUrl, PublicUrl, type PublicUrlService, withoutTrailingSlash } from "./src/ports/publicUrl.js"
import type { Storage } from "./src/ports/storage.js"
import { isSignInKey } from "./src/ratelimit/policy.js"
import type { RateLimitStore } from "./src/ports/rateLimitStore.js"
import type { WebhookOutbox } from "./src/webhooks/Outbox.js"
import { WebhookPolicy } from "./src/webhooks/policy.js"

export { MemoryStorageLive }

/**
 * SQLite storage. Its driver (a native module) is loaded when the layer is built, so a
 * server or an app on memory or PostgreSQL never loads it.
 */
export const SqliteStorageLive = (options: SqliteStorageOptions): Layer.Layer<Storage, StorageFailure> =>
  Layer.unwrapEffect(Effect.map(Effect.promise(() => import("./adapters/sqlite/layer.js")), (m) => m.SqliteStorageLive(options)))

/**
 * PostgreSQL storage. Its driver (and the Redis client below) is loaded when the layer is
 * built, so a server or an app on SQLite or memory never loads it.
 */
export const PostgresStorageLive = (options: PostgresStorageOptions): Layer.Layer<Storage, StorageFailure> =>
  Layer.unwrapEffect(Effect.map(Effect.promise(() => import("./adapters/postgres/layer.js")), (m) => m.PostgresStorageLive(options)))

/** Rate-limit counters in Redis, shared by every process that uses it. */
export const RedisRateLimitStoreLive = (options: RedisRateLimitStoreOptions): Layer.Layer<RateLimitStore> =>
  Layer.unwrapEffect(Effect.map(Effect.promise(() => import("./adapters/redis/ratelimit.js")), (m) => m.RedisRateLimitStoreLive(options)))

export type { StorageChoice } from "./schedulingOptions.js"

/** A `--database` value: a `postgres://` or `postgresql://` URL selects PostgreSQL; anything else is a SQLite file. */
export { storageFromLocation } from "./adapters/cli/storageLocation.js"

/** How opening storage reports its progress and how long it waits for PostgreSQL. */
export interface StorageStartOptions {
  /** Where opening storage says what it does: connection refusals while it retries, migrating. */
  readonly log?: ((line: string) => void) | undefined
  /** How long start-up keeps trying a PostgreSQL server it cannot reach (default 30,000 ms; 0 = once). */
  readonly waitMs?: number | undefined
}

export const storageLayer = (choice: StorageChoice = "memory", start: StorageStartOptions = {}): Layer.Layer<Storage, unknown> => {
  const log = start.log === undefined ? {} : { log: start.log }
  return choice === "memory"
    ? MemoryStorageLive
    : "postgres" in choice
    ? PostgresStorageLive({ url: choice.postgres, ...log, ...(start.waitMs === undefined ? {} : { startTimeoutMs: start.waitMs }) })
    : SqliteStorageLive({ filename: choice.sqlite, ...log })
}

/** Whether every commit happens in this process (so nothing needs polling for other writers). */
export const isInProcess = (choice: StorageChoice = "memory"): boolean => choice === "memory"

/**
 * The dispatcher's poll interval for other processes' commits when storage is in memory:
 * never in practice, since each commit wakes it (this also keeps a controlled clock's
 * advance cheap in tests).
 */
export const IN_PROCESS_POLL_MS = 86_400_000

export interface WebhookPolicyOptions {
  /** Let webhook URLs name private, loopback and link-local addresses (development, tests). */
  readonly allowPrivate?: boolean | undefined
  /** Resolve a URL's hostname when it is registered (default true; a test sandbox skips DNS). */
  readonly resolveHosts?: boolean | undefined
  readonly resolver?: Resolver | undefined
}

/** How webhook URLs are checked at registration. */
export const webhookPolicyLayer = (options: WebhookPolicyOptions = {}): Layer.Layer<WebhookPolicy> => {
  const allowPrivate = options.allowPrivate ?? false
  if (options.resolveHosts === false) return Layer.succeed(WebhookPolicy, { allowPrivate })
  return WebhookPolicyLive({ allowPrivate, ...(options.resolver !== undefined ? { resolver: options.resolver } : {}) })
}

/**
 * The delivery dispatcher (nothing for `false`). Closing it lets attempts in flight finish
 * and records them, so it must close before storage does.
 */
export const dispatcherLayer = (
  options: false | WebhookDispatcherOptions,
  storage: StorageChoice = "memory"
): Layer.Layer<never, never, WebhookOutbox | Events> =>
  options === false
    ? Layer.empty
    : WebhookDispatcherLive(isInProcess(storage) ? { pollIntervalMs: IN_PROCESS_POLL_MS, ...options } : options)

/**
 * The background work of every instance: the delivery dispatcher when asked for, and the
 * reminder worker always (on in-memory storage every commit wakes it, so it sleeps until
 * the next due reminder without a cap).
 */
export const workersLayer = (
  dispatch: false | WebhookDispatcherOptions,
  storage: StorageChoice = "memory"
): Layer.Layer<never, never, WebhookOutbox | Events | Storage> =>
  Layer.merge(
    dispatcherLayer(dispatch, storage),
    ReminderWorkerLive(isInProcess(storage) ? { maxSleepMs: IN_PROCESS_POLL_MS } : {})
  )

export interface DomainOptions {
  /** The resolver for domain verification as `host:port` (`--dns-server`); default: the system's. */
  readonly dnsServer?: string | undefined
  /** About how long a TXT lookup may take before `verify` reports a timeout (default 5000 ms). */
  readonly dnsTimeoutMs?: number | undefined
  /** The server's public URL: its host is no account's custom domain. */
  readonly publicUrl?: string | undefined
}

/** The DNS resolver and settings the core's custom domains use. */
export const domainsLayer = (options: DomainOptions = {}) =>
  Layer.merge(
    DnsResolverLive({
      ...(options.dnsServer !== undefined ? { servers: [options.dnsServer] } : {}),
      timeoutMs: options.dnsTimeoutMs
    }),
    Layer.succeed(DomainSettings, {
      reservedHosts: options.publicUrl !== undefined && URL.canParse(options.publicUrl) ? [new URL(options.publicUrl).hostname] : []
    })
  )

export interface CalendarOptions {
  /** Minutes between two reads of each calendar feed (`--calendar-sync-minutes`, default 10). */
  readonly calendarSyncMinutes?: number | undefined
  /** The feed parse workers' number and limits (time, memory, steps); adapters/calendars/parseWorker.ts's defaults. */
  readonly calendarParse?: ParsePoolOptions | undefined
}

/**
 * How calendar feeds are read: under the webhook address guard (private addresses only when
 * `allowPrivate`), every `calendarSyncMinutes`.
 */
export const calendarsLayer = (options: CalendarOptions & { readonly allowPrivate?: boolean | undefined } = {}) => {
  const allowPrivate = options.allowPrivate ?? false
  return Layer.merge(
    FeedReaderLive({ allowPrivate, lookup: guardedLookup(systemResolver, allowPrivate), parse: options.calendarParse }),
    Layer.succeed(CalendarSyncSettings, {
      intervalMs: options.calendarSyncMinutes !== undefined ? options.calendarSyncMinutes * 60_000 : DEFAULT_SYNC_INTERVAL_MS,
      leaseMs: DEFAULT_SYNC_LEASE_MS
    })
  )
}

/** The calendar sync loop (nothing for `false`); needs the core's `Calendars`. */
export const calendarSyncLayer = (options: false | CalendarSyncLoopOptions = {}) =>
  options === false ? Layer.empty : CalendarSyncLoopLive(options)

/**
 * The server's public URL (the `PublicUrl` port), which manage links, hosted pages and
 * calendar feed URLs all start with: a fixed base URL, or one known only once the server
 * listens (read on each link, so links made after start-up carry the listening address).
 */
export type PublicUrlChoice = string | PublicUrlService

const publicUrlLayer = (choice: PublicUrlChoice | undefined) =>
  Layer.succeed(PublicUrl, typeof choice === "object" ? choice : fixedPublicUrl(choice ?? DEFAULT_PUBLIC_URL))

/**
 * The core use cases with their webhook policy, DNS resolver, calendar renderer (ical-generator)
 * and feed reader, the recurrence expander (ical.js), manage-link MACs on Node's crypto and the
 * public URL every link starts with; still needs `Storage`.
 */
export const coreLayer = (
  policy: WebhookPolicyOptions = {},
  domains: DomainOptions = {},
  publicUrl?: PublicUrlChoice,
  calendars: CalendarOptions = {}
) =>
  CoreLive.pipe(
    Layer.provide(Layer.mergeAll(
      webhookPolicyLayer(policy),
      domainsLayer(domains),
      CalendarRendererLive,
      calendarsLayer({ ...calendars, allowPrivate: policy.allowPrivate }),
      NodeManageLinkMacLive,
      RecurrenceExpanderLive,
      publicUrlLayer(publicUrl)
    ))
  )

/** A public URL set once the server listens, unless `--public-url` fixed it. */
const listeningPublicUrl = (configured: string | undefined) => {
  let listening: string | undefined
  const service: PublicUrlService = {
    baseFor: () => Effect.sync(() => withoutTrailingSlash(configured ?? listening ?? DEFAULT_PUBLIC_URL))
  }
  return { service, listen: (url: string) => void (listening = url) }
}

/**
 * The bearer credentials the API accepts: API keys, then OAuth access tokens (any other
 * form); a further kind is one more argument here, with its layer provided.
 */
export const CredentialsLive = authenticatorLayer(oauthAccessTokenCredentials)

/** Accounts, keys, idempotency, the rate limiter, and OAuth's users, clients and grants. */
export const AccessServicesLive = Layer.mergeAll(AccessLive, OAuthServicesLive)

export interface HttpServicesOptions extends Omit<DomainOptions, "publicUrl">, CalendarOptions {
  readonly storage?: StorageChoice | undefined
  /** See `WebhookPolicyOptions.allowPrivate`: applies to the URL check and to delivery, and to calendar feeds. */
  readonly allowPrivateWebhooks?: boolean | undefined
  /**
   * Where rate-limit counters live (default: this process). A shared store (Redis) makes the
   * limits hold across server processes.
   */
  readonly rateLimitStore?: Layer.Layer<RateLimitStore, unknown> | undefined
  /** Keep rate-limit counters in the Redis at this URL (`redis://…`), shared by every process using it. */
  readonly redis?: string | undefined
  /** The base of manage links (`{publicUrl}/manage/{token}`) and calendar feed URLs (`{publicUrl}/calendar/…`). */
  readonly publicUrl?: PublicUrlChoice | undefined
  /** The server's own fixed public URL, whose host no account may claim (default: `publicUrl` when a string). */
  readonly serverPublicUrl?: string | undefined
  /** Progress while storage opens, and how long to wait for PostgreSQL. */
  readonly storageStart?: StorageStartOptions | undefined
}

const rateLimitStoreLayer = (options: HttpServicesOptions): Layer.Layer<RateLimitStore, unknown> =>
  options.rateLimitStore ??
    (options.redis !== undefined
      ? RedisRateLimitStoreLive({ url: options.redis, fallback: { store: makeMemoryRateLimitStore(), keys: isSignInKey } })
      : MemoryRateLimitStoreLive)

/** Everything the HTTP handlers and the request pipeline use: the core and the access services, over storage. */
export const httpServicesLayer = (options: HttpServicesOptions = {}) =>
  Layer.mergeAll(
    coreLayer(
      { allowPrivate: options.allowPrivateWebhooks },
      { ...options, publicUrl: options.serverPublicUrl ?? (typeof options.publicUrl === "string" ? options.publicUrl : undefined) },
      options.publicUrl,
      options
    ),
    CredentialsLive.pipe(Layer.provideMerge(AccessServicesLive))
  ).pipe(
    Layer.provide(rateLimitStoreLayer(options)),
    Layer.provideMerge(storageLayer(options.storage, options.storageStart))
  )

/** The dispatcher's tuning for the HTTP server; private addresses come from `allowPrivateWebhooks`. */
export type DispatchOptions = Omit<WebhookDispatcherOptions, "allowPrivate">

export interface WebhookServingOptions {
  readonly allowPrivateWebhooks?: boolean | undefined
  /**
   * Run the webhook dispatcher with the API (default `true`): `false` when another process
   * on the same database dispatches, or its options (timeouts, lease, concurrency).
   */
  readonly webhooks?: boolean | DispatchOptions | undefined
  /**
   * Run the calendar sync loop with the API (default `true`): `false` when other processes
   * on the same database sync feeds, or its options (poll interval).
   */
  readonly calendarSync?: boolean | CalendarSyncLoopOptions | undefined
}

/** The background work beside the API: the webhook dispatcher and the calendar sync loop. */
const servingDispatcher = (options: WebhookServingOptions, storage: StorageChoice) =>
  Layer.merge(
    workersLayer(
      options.webhooks === false
        ? false
        : { ...(typeof options.webhooks === "object" ? options.webhooks : {}), allowPrivate: options.allowPrivateWebhooks ?? false },
      storage
    ),
    calendarSyncLayer(options.calendarSync === true || options.calendarSync === undefined ? {} : options.calendarSync)
  )

export interface ServerOptions extends ServeOptions, WebhookServingOptions, Omit<HttpServicesOptions, "publicUrl"> {
  readonly storage: StorageChoice
}

/** `slotwise serve` as a layer: launch it with `Layer.launch`. Links use `publicUrl`, else the listening address. */
export const serverLayer = (options: ServerOptions) => {
  const publicUrl = listeningPublicUrl(options.publicUrl)
  const onListening = (url: string) => {
    // Pages (and so manage links) live under the mount prefix.
    publicUrl.listen(`${url}${withoutTrailingSlash(options.prefix ?? "")}`)
    options.onListening?.(url)
  }
  return makeServerLayer({ ...options, onListening }, {
    services: httpServicesLayer({ ...options, publicUrl: publicUrl.service, serverPublicUrl: options.publicUrl }),
    dispatcher: servingDispatcher(options, options.storage),
    // The OAuth authorization server answers /.well-known/oauth-authorization-server and /oauth/*.
    beside: (issuer) => makeOAuthHandler({ issuer, trustProxy: options.trustProxy })
  })
}

/**
 * `webhooks` (default `true`): the handlers run the webhook dispatcher in this process, so
 * subscriptions made through the API are delivered; pass `false` when another process on
 * the same database dispatches (or options to tune it). `allowPrivateWebhooks` (default
 * false) lets webhook URLs name private, loopback and link-local hosts.
 */
export interface HttpHandlerOptions extends MountOptions, WebhookServingOptions, HttpServicesOptions {
  /** `"memory"` (default), `{ sqlite: "file.db" }` or `{ postgres: "postgres://…" }`. */
  readonly storage?: StorageChoice | undefined
}

/**
 * The API's handlers to mount inside another server (Fetch and Node). With
 * `prefix: "/scheduling"` requests for `/scheduling/v1/bookings` reach `/v1/bookings`. With
 * `oauth: { issuer }` the Node handler also serves the authorization server under the prefix.
 */
export const createHttpHandler = (options: HttpHandlerOptions = {}): Promise<SlotwiseHttpHandler> =>
  makeHttpHandler(options, {
    // Links: `publicUrl`, else the OAuth issuer (the URL the handler is reached at).
    services: httpServicesLayer({ ...options, publicUrl: options.publicUrl ?? options.oauth?.issuer }),
    dispatcher: servingDispatcher(options, options.storage ?? "memory"),
    beside: (issuer) => makeOAuthHandler({ issuer, trustProxy: options.trustProxy })
  })

export type { SlotwiseHttpHandler }
