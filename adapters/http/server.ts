/**
 * The HTTP server: the app layer on a node:http server, with the first-start account, the
 * `listening on` line, the webhook dispatcher, and graceful shutdown in this order: stop
 * accepting and finish in-flight requests (connections still open after a grace period are
 * cut), then flush the dispatcher (attempts in flight finish and are recorded), then close
 * storage.
 */
import { HttpApiBuilder, HttpMiddleware, HttpServer } from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import { Effect, Layer, Option } from "effect"
import * as http from "node:http"
import { Accounts } from "../../src/Accounts.js"
import type { AccountWithKeys } from "../../src/domain/account.js"
import { Storage } from "../../src/ports/storage.js"
import { answerClientError, MAX_HEADER_BYTES } from "./clientError.js"
import { type AppOptions, type AppWiring, makeAppLayer } from "./app.js"
import { directReadLane } from "./handlers/reads.js"

export interface ServeOptions extends AppOptions {
  readonly port: number
  readonly host: string
  /** On an empty database, create an account and report its keys (once). Default true. */
  readonly bootstrap?: boolean | undefined
  /** Called with the address once the server accepts requests. */
  readonly onListening?: ((url: string) => void) | undefined
  /** Called with the account created on first start. */
  readonly onFirstAccount?: ((created: AccountWithKeys) => void) | undefined
  /** How long shutdown waits for in-flight requests before cutting connections (ms). */
  readonly shutdownGraceMs?: number | undefined
  /** The public base URL (the OAuth issuer); default: the listening address. */
  readonly publicUrl?: string | undefined
}

export const FIRST_ACCOUNT = { name: "Default account", plan: "pro" } as const

/**
 * Creates the first account when none exists: the check and the creation in one transaction,
 * so servers starting together on an empty shared database create one account, not one each.
 */
export const bootstrapAccount = Effect.gen(function*() {
  const accounts = yield* Accounts
  const storage = yield* Effect.serviceOption(Storage)
  const once = Effect.gen(function*() {
    if (!(yield* accounts.isEmpty)) return undefined
    return yield* accounts.create(FIRST_ACCOUNT)
  })
  return yield* Option.match(storage, { onNone: () => once, onSome: (s) => s.transaction(once) })
})

export const makeServerLayer = <E>(options: ServeOptions, wiring: AppWiring<E>) => {
  const server = http.createServer({ keepAliveTimeout: 5_000, maxHeaderSize: MAX_HEADER_BYTES })
  server.on("clientError", answerClientError)
  const grace = options.shutdownGraceMs ?? 10_000

  // Released before the server's own finalizer (which waits for open connections): after
  // the grace period, connections that are still open are closed.
  const cutOff = Layer.scopedDiscard(Effect.addFinalizer(() =>
    Effect.sync(() => {
      server.closeIdleConnections()
      setTimeout(() => server.closeAllConnections(), grace).unref()
    })
  ))

  const bootstrap = Layer.effectDiscard(
    options.bootstrap === false ? Effect.void : Effect.flatMap(bootstrapAccount, (created) =>
      Effect.sync(() => {
        if (created !== undefined) options.onFirstAccount?.(created)
      }))
  )

  // Once the API's listener is in place: the handlers beside it take the paths they claim,
  // and the direct read lane the plain reads (without a mount prefix, which only the
  // pipeline strips).
  const announce = Layer.effectDiscard(Effect.gen(function*() {
    const address = (yield* HttpServer.HttpServer).address
    const url = address._tag === "TcpAddress" ? `http://${address.hostname}:${address.port}` : `unix:${address.path}`
    const side = wiring.beside === undefined ? undefined : yield* wiring.beside(options.publicUrl ?? url)
    const lane = options.prefix === undefined ? yield* directReadLane : undefined
    const api = server.listeners("request") as Array<http.RequestListener>
    server.removeAllListeners("request")
    server.on("request", (req: http.IncomingMessage, res: http.ServerResponse) => {
      const toApi = () => {
        for (const listener of api) listener(req, res)
      }
      if (side?.serves((req.url ?? "/").split("?", 1)[0]!)) side.node(req, res)
      else if (lane !== undefined) lane(req, res, toApi)
      else toApi()
    })
    options.onListening?.(url)
  }))

  // Layers are released in the reverse order of their construction: the HTTP side (built
  // last) closes first and waits for its requests, then the dispatcher drains, then storage.
  const web = announce.pipe(
    Layer.provide(cutOff),
    Layer.provide(HttpApiBuilder.serve().pipe(
      Layer.provide(makeAppLayer(options)),
      // A tracing span per request costs a third of a small request's time, and nothing reads them.
      HttpMiddleware.withTracerDisabledWhen(() => true)
    )),
    Layer.provide(NodeHttpServer.layer(() => server, { port: options.port, host: options.host }))
  )

  return web.pipe(
    Layer.provide(wiring.dispatcher),
    Layer.provide(bootstrap),
    Layer.provide(wiring.services)
  )
}
