/**
 * The HTTP application as layers: the core and access services over a storage layer, the
 * HttpApi with its handlers, the request pipeline, the OpenAPI document and the docs page.
 * The server (server.ts), the Fetch and Node handlers (mount.ts) and the tests all build on
 * `makeAppLayer`; swapping SQLite for memory is swapping the storage layer.
 */
import { HttpApiBuilder, HttpApiScalar } from "@effect/platform"
import { Layer } from "effect"
import { MemoryRateLimitStoreLive } from "../memory/ratelimit.js"
import { Accounts } from "../../src/Accounts.js"
import { ApiKeys } from "../../src/ApiKeys.js"
import { Idempotency } from "../../src/Idempotency.js"
import { CoreLive } from "../../src/layers.js"
import type { Storage } from "../../src/ports/storage.js"
import { RateLimiter } from "../../src/ratelimit/RateLimiter.js"
import type { RateLimitStore } from "../../src/ratelimit/store.js"
import { SlotwiseApi } from "./api.js"
import { HandlersLive } from "./handlers/index.js"
import { DOCS_PATH, makePipeline, OPENAPI_PATH, type PipelineOptions } from "./middleware/pipeline.js"

/** Accounts, keys, idempotency and the rate limiter; needs `Storage` and a `RateLimitStore`. */
export const AccessLive = Layer.mergeAll(Accounts.Default, Idempotency.Default, RateLimiter.Default).pipe(
  Layer.provideMerge(ApiKeys.Default)
)

/** Everything the handlers use, over one storage layer (and the in-process rate-limit store by default). */
export const servicesLayer = <E>(
  storage: Layer.Layer<Storage, E>,
  rateLimitStore: Layer.Layer<RateLimitStore> = MemoryRateLimitStoreLive
) =>
  Layer.mergeAll(CoreLive, AccessLive).pipe(
    Layer.provide(rateLimitStore),
    Layer.provideMerge(storage)
  )

export type AppOptions = PipelineOptions

/**
 * The API (`HttpApi.Api`) with the pipeline, `/v1/openapi.json` and `/docs`; needs the
 * services of `servicesLayer`. Serve it with `HttpApiBuilder.serve`, or turn it into a
 * handler with `HttpApiBuilder.toWebHandler` / `HttpApiBuilder.httpApp`.
 */
export const makeAppLayer = (options: AppOptions = {}) =>
  Layer.mergeAll(
    HttpApiBuilder.middleware(makePipeline(options)),
    HttpApiBuilder.middlewareOpenApi({ path: OPENAPI_PATH }),
    HttpApiScalar.layer({ path: DOCS_PATH, scalar: { withDefaultFonts: false } })
  ).pipe(Layer.provideMerge(HttpApiBuilder.api(SlotwiseApi).pipe(Layer.provide(HandlersLive))))
