/**
 * The HTTP application as layers: the access services, the HttpApi with its handlers, the
 * request pipeline, the OpenAPI document and the docs page. It needs the core and access
 * services over a storage layer, which the composition root (compose.ts) provides; the
 * server (server.ts), the Fetch and Node handlers (mount.ts) and the tests all build on
 * `makeAppLayer`.
 */
import type { Calendars } from "../../src/calendars/Calendars.js"
import { HttpApiBuilder } from "@effect/platform"
import { Effect, Layer } from "effect"
import type * as http from "node:http"
import type { Events } from "../../src/events/Events.js"
import type { Storage } from "../../src/ports/storage.js"
import type { WebhookOutbox } from "../../src/webhooks/Outbox.js"
import { Accounts } from "../../src/accounts/Accounts.js"
import { ApiKeys } from "../../src/keys/ApiKeys.js"
import { Idempotency } from "../../src/idempotency/Idempotency.js"
import { RateLimiter } from "../../src/ratelimit/RateLimiter.js"
import { SlotwiseApi } from "./api.js"
import { HandlersLive } from "./handlers/index.js"
import { DocsLive } from "./docs.js"
import { Gate } from "./middleware/gate.js"
import { makePipeline, type PipelineOptions } from "./middleware/pipeline.js"
import { withWidget } from "./widgetAsset.js"
import { HostedPageKeys } from "../../src/hostedPages/HostedPages.js"
import { makePages } from "./pages/pages.js"

/** Accounts, keys, idempotency and the rate limiter; needs `Storage` and a `RateLimitStore`. */
export const AccessLive = Layer.mergeAll(Accounts.Default, Idempotency.Default, RateLimiter.Default, HostedPageKeys.Default).pipe(
  Layer.provideMerge(ApiKeys.Default)
)

export type AppOptions = PipelineOptions

/**
 * The API (`HttpApi.Api`) with the pipeline, `/v1/openapi.json` and `/docs`; needs the
 * services (`AppServices`). Serve it with `HttpApiBuilder.serve`, or turn it into a
 * handler with `HttpApiBuilder.toWebHandler` / `HttpApiBuilder.httpApp`.
 */
export const makeAppLayer = (options: AppOptions = {}) =>
  Layer.mergeAll(
    // /widget.js is answered before the pipeline: a static asset, no credential, not counted;
    // the hosted pages too (they count their requests themselves).
    HttpApiBuilder.middleware(Effect.map(
      Effect.all([makePipeline(options), makePages(options)]),
      ([pipeline, pages]) => (app) => pages(withWidget(options.prefix)(pipeline(app)))
    )).pipe(Layer.provide(Gate.Default(options.adminToken))),
    DocsLive
  ).pipe(Layer.provideMerge(HttpApiBuilder.api(SlotwiseApi).pipe(Layer.provide(HandlersLive))))

/** What the app layer needs from the composition root: the core and access services. */
export type AppServices = Layer.Layer.Context<ReturnType<typeof makeAppLayer>>

/**
 * A Node handler served beside the API for the paths it claims (the OAuth authorization
 * server, which speaks through its own Node handler), built once the server's public URL is known.
 */
export interface SideHandler {
  readonly serves: (path: string) => boolean
  readonly node: (req: http.IncomingMessage, res: http.ServerResponse) => void
}

/** What the composition root passes to the server and the mounted handlers. */
export interface AppWiring<E> {
  /** Handlers beside the API, given the server's public base URL. */
  readonly beside?: ((baseUrl: string) => Effect.Effect<SideHandler, unknown, AppServices | Storage>) | undefined
  /** The core and access services over storage. */
  readonly services: Layer.Layer<AppServices | Accounts | WebhookOutbox | Events | Calendars | Storage, E>
  /** The background work (webhook dispatcher, reminder worker, calendar sync loop); it is closed before storage. */
  readonly dispatcher: Layer.Layer<never, never, WebhookOutbox | Events | Calendars | Storage>
}
