/**
 * The API as handlers to mount inside another server: a Fetch handler
 * `(Request) => Promise<Response>` and a Node `(req, res)` handler over one set of services,
 * under any path prefix. compose.ts's `createHttpHandler` wires them to storage.
 */
import { HttpApiBuilder, HttpApp, type HttpRouter } from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import { Effect, Layer, ManagedRuntime } from "effect"
import type * as http from "node:http"
import { Accounts } from "../../src/Accounts.js"
import type { AccountCreate, AccountWithKeys } from "../../src/domain/account.js"
import { isSlotwiseFailure } from "../../src/domain/errors.js"
import { toSlotwiseError } from "../../src/facade.js"
import { type AppOptions, type AppWiring, makeAppLayer } from "./app.js"

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

/** Builds the API's handlers over the services and dispatcher the composition root made. */
export const makeHttpHandler = async <E>(options: AppOptions, wiring: AppWiring<E>): Promise<SlotwiseHttpHandler> => {
  const runtime = ManagedRuntime.make(
    Layer.mergeAll(
      makeAppLayer(options),
      HttpApiBuilder.Router.Live,
      HttpApiBuilder.Middleware.layer,
      NodeHttpServer.layerContext,
      wiring.dispatcher
    ).pipe(Layer.provideMerge(wiring.services))
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
