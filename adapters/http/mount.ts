/**
 * The API as handlers to mount inside another server (API.md §6): a Fetch handler
 * `(Request) => Promise<Response>` and a Node `(req, res)` handler over one set of services,
 * under any path prefix.
 */
import { HttpApiBuilder, HttpApp, type HttpRouter } from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import { Effect, Layer, ManagedRuntime } from "effect"
import type * as http from "node:http"
import { Accounts } from "../../src/Accounts.js"
import type { AccountCreate, AccountWithKeys } from "../../src/domain/account.js"
import { isSlotwiseFailure } from "../../src/domain/errors.js"
import { toSlotwiseError } from "../../src/facade.js"
import { type AppOptions, dispatcherLayer, makeAppLayer, servicesLayer, type WebhookServingOptions } from "./app.js"
import { type StorageOption, storageLayer } from "./server.js"

/**
 * `webhooks` (default `true`): the handlers run the webhook dispatcher in this process, so
 * subscriptions made through the API are delivered; pass `false` when another process on
 * the same database dispatches (or options to tune it). `allowPrivateWebhooks` (default
 * false) lets webhook URLs name private, loopback and link-local hosts.
 */
export interface HttpHandlerOptions extends AppOptions, WebhookServingOptions {
  /** `"memory"` (default) or `{ sqlite: "file.db" }`. */
  readonly storage?: StorageOption | undefined
}

export interface SlotwiseHttpHandler {
  /** Fetch API handler (Deno, Bun, Cloudflare-style servers, `new Request(...)` in tests). */
  readonly fetch: (request: Request) => Promise<Response>
  /** Node `http` request listener. */
  readonly node: (req: http.IncomingMessage, res: http.ServerResponse) => void
  /** Creates an account with its four keys (the operator's `POST /admin/v1/accounts`). */
  readonly createAccount: (input: typeof AccountCreate.Encoded) => Promise<AccountWithKeys>
  /**
   * Stops the webhook dispatcher (attempts in flight finish and are recorded), then closes
   * storage; in-flight requests should be finished first.
   */
  readonly close: () => Promise<void>
}

/**
 * Builds the API's handlers. With `prefix: "/scheduling"` requests for
 * `/scheduling/v1/bookings` reach `/v1/bookings`.
 */
export const createHttpHandler = async (options: HttpHandlerOptions = {}): Promise<SlotwiseHttpHandler> => {
  const storage = options.storage ?? "memory"
  const services = servicesLayer(storageLayer(storage), { allowPrivateWebhooks: options.allowPrivateWebhooks })
  const runtime = ManagedRuntime.make(
    Layer.mergeAll(
      makeAppLayer(options),
      HttpApiBuilder.Router.Live,
      HttpApiBuilder.Middleware.layer,
      NodeHttpServer.layerContext,
      dispatcherLayer(options, { inMemory: storage === "memory" })
    ).pipe(Layer.provideMerge(services))
  )
  const { fetch, node } = await runtime.runPromise(Effect.gen(function*() {
    const app = yield* HttpApiBuilder.httpApp
    const node = yield* NodeHttpServer.makeHandler(app)
    const fetch = HttpApp.toWebHandlerRuntime(yield* Effect.runtime<HttpRouter.HttpRouter.DefaultServices>())(app)
    return { fetch, node }
  }))
  return {
    fetch: (request) => fetch(request),
    node,
    createAccount: (input) =>
      runtime.runPromise(Effect.flatMap(Accounts, (accounts) => accounts.create(input)).pipe(
        Effect.mapError((e) => (isSlotwiseFailure(e) ? toSlotwiseError(e) : e))
      )),
    close: () => runtime.dispose()
  }
}
