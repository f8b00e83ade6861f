/**
 * The HTTP application as layers: the core and access services over a storage layer, the
 * HttpApi with its handlers, the request pipeline, the OpenAPI document and the docs page,
 * and the webhook dispatcher that runs beside them.
 * The server (server.ts), the Fetch and Node handlers (mount.ts) and the tests all build on
 * `makeAppLayer`; swapping SQLite for memory is swapping the storage layer.
 */
import { HttpApiBuilder, HttpApiScalar } from "@effect/platform"
import { Effect, Layer } from "effect"
import { MemoryRateLimitStoreLive } from "../memory/ratelimit.js"
import { WebhookDispatcherLive, type WebhookDispatcherOptions } from "../webhooks/dispatcher.js"
import { WebhookPolicyLive } from "../webhooks/guard.js"
import { Accounts } from "../../src/Accounts.js"
import { ApiKeys } from "../../src/ApiKeys.js"
import { Idempotency } from "../../src/Idempotency.js"
import type { Events } from "../../src/Events.js"
import { CoreLive } from "../../src/layers.js"
import type { Storage } from "../../src/ports/storage.js"
import { RateLimiter } from "../../src/ratelimit/RateLimiter.js"
import type { RateLimitStore } from "../../src/ratelimit/store.js"
import type { Webhooks } from "../../src/Webhooks.js"
import { SlotwiseApi } from "./api.js"
import { HandlersLive } from "./handlers/index.js"
import { DOCS_PATH, makePipeline, OPENAPI_PATH, type PipelineOptions } from "./middleware/pipeline.js"
import { withWidget } from "./widgetAsset.js"

/** Accounts, keys, idempotency and the rate limiter; needs `Storage` and a `RateLimitStore`. */
export const AccessLive = Layer.mergeAll(Accounts.Default, Idempotency.Default, RateLimiter.Default).pipe(
  Layer.provideMerge(ApiKeys.Default)
)

export interface ServicesOptions {
  /** Where rate-limit counters live (default: in this process). */
  readonly rateLimitStore?: Layer.Layer<RateLimitStore> | undefined
  /**
   * Let webhook URLs name private, loopback and link-local addresses
   * (`--allow-private-webhooks`; development and tests). Default false: refused with 422.
   */
  readonly allowPrivateWebhooks?: boolean | undefined
}

/**
 * Everything the handlers use, over one storage layer: the core (webhook URLs checked by
 * `WebhookPolicyLive`, which resolves hostnames) and the access services.
 */
export const servicesLayer = <E>(storage: Layer.Layer<Storage, E>, options: ServicesOptions = {}) =>
  Layer.mergeAll(
    CoreLive.pipe(Layer.provide(WebhookPolicyLive({ allowPrivate: options.allowPrivateWebhooks ?? false }))),
    AccessLive
  ).pipe(
    Layer.provide(options.rateLimitStore ?? MemoryRateLimitStoreLive),
    Layer.provideMerge(storage)
  )

/** The dispatcher's tuning; whether private addresses are reachable comes from `allowPrivateWebhooks`. */
export type DispatchOptions = Omit<WebhookDispatcherOptions, "allowPrivate">

export interface WebhookServingOptions {
  /** See `ServicesOptions.allowPrivateWebhooks`: applies to the URL check and to delivery. */
  readonly allowPrivateWebhooks?: boolean | undefined
  /**
   * Run the webhook dispatcher with the API (default `true`): `false` when another process
   * on the same database dispatches, or its options (timeouts, lease, concurrency).
   */
  readonly webhooks?: boolean | DispatchOptions | undefined
}

/**
 * The webhook dispatcher as configured (nothing when `webhooks: false`); needs the core's
 * `Webhooks` and `Events`. Closing it lets attempts in flight finish and records them, so
 * it must close before storage does. On in-memory storage every commit happens in this
 * process and wakes it, so it does not poll for other processes' commits.
 */
export const dispatcherLayer = (
  options: WebhookServingOptions,
  storage: { readonly inMemory: boolean }
): Layer.Layer<never, never, Webhooks | Events> => {
  if (options.webhooks === false) return Layer.empty
  const tuning: DispatchOptions = options.webhooks === true || options.webhooks === undefined ? {} : options.webhooks
  return WebhookDispatcherLive({
    ...(storage.inMemory ? { pollIntervalMs: 86_400_000 } : {}),
    ...tuning,
    allowPrivate: options.allowPrivateWebhooks ?? false
  })
}

export type AppOptions = PipelineOptions

/**
 * The API (`HttpApi.Api`) with the pipeline, `/v1/openapi.json` and `/docs`; needs the
 * services of `servicesLayer`. Serve it with `HttpApiBuilder.serve`, or turn it into a
 * handler with `HttpApiBuilder.toWebHandler` / `HttpApiBuilder.httpApp`.
 */
export const makeAppLayer = (options: AppOptions = {}) =>
  Layer.mergeAll(
    // /widget.js is answered before the pipeline: a static asset, no credential, not counted.
    HttpApiBuilder.middleware(Effect.map(makePipeline(options), (pipeline) => (app) => withWidget(options.prefix)(pipeline(app)))),
    HttpApiBuilder.middlewareOpenApi({ path: OPENAPI_PATH }),
    HttpApiScalar.layer({ path: DOCS_PATH, scalar: { withDefaultFonts: false } })
  ).pipe(Layer.provideMerge(HttpApiBuilder.api(SlotwiseApi).pipe(Layer.provide(HandlersLive))))
