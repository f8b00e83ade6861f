/**
 * The HTTP server: the app layer on a node:http server, with the first-start account, the
 * `listening on` line, the webhook dispatcher, and graceful shutdown in this order:
 * stop accepting and finish in-flight requests (connections still open after a grace period
 * are cut), then flush the dispatcher (attempts in flight finish and are recorded), then
 * close storage; each step is logged as it ends.
 */
import { Etag, FileSystem, HttpApiBuilder, HttpMiddleware, HttpPlatform, HttpServer, Path } from "@effect/platform"
import { NodeFileSystem, NodeHttpPlatform, NodeHttpServer, NodePath } from "@effect/platform-node"
import { Context, Effect, Layer, Option, Scope } from "effect"
import * as http from "node:http"
import { Accounts } from "../../src/accounts/Accounts.js"
import type { AccountWithKeys } from "../../src/accounts/account.js"
import { Storage } from "../../src/ports/storage.js"
import { answerClientError, MAX_HEADER_BYTES } from "./clientError.js"
import { FAVICON_PATH, serveFavicon } from "./favicon.js"
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
  /** Where the server reports its shutdown steps (default: nowhere). */
  readonly log?: ((line: string) => void) | undefined
}

export const FIRST_ACCOUNT = { name: "Default account", plan: "pro" } as const

/**
 * The origins the first account's publishable keys may be used from when the server runs
 * without a public URL (on a developer's machine): the server itself, and the usual local
 * static-file servers (Vite 5173, `npx serve` 3000, `python3 -m http.server` 8000), so the
 * widget can be tried at once. With a public URL there are none: the operator sets them.
 */
export const devOrigins = (port: number): ReadonlyArray<string> => [
  ...new Set([
    `http://localhost:${port}`,
    `http://127.0.0.1:${port}`,
    "http://localhost:5173",
    "http://localhost:3000",
    "http://localhost:8000"
  ])
]

/**
 * Creates the first account when none exists: the check and the creation in one transaction,
 * so servers starting together on an empty shared database create one account, not one each.
 */
export const bootstrapAccount = (allowedOrigins: ReadonlyArray<string> = []) =>
  Effect.gen(function*() {
    const accounts = yield* Accounts
    const storage = yield* Effect.serviceOption(Storage)
    const once = Effect.gen(function*() {
      if (!(yield* accounts.isEmpty)) return undefined
      return yield* accounts.create({ ...FIRST_ACCOUNT, allowed_origins: allowedOrigins })
    })
    return yield* Option.match(storage, { onNone: () => once, onSome: (s) => s.transaction(once) })
  })

/**
 * The API on the platform's server, its requests run with the platform's own services only:
 * every handler, middleware step and page took the services it uses when it was built. Each
 * step that adds to a request's context (the request, the route, the tenant) copies it, so a
 * request starts from six entries instead of every service of the server.
 */
export const serveApi = Layer.scopedDiscard(Effect.gen(function*() {
  const app = yield* HttpApiBuilder.httpApp
  const context = yield* Effect.context<
    HttpServer.HttpServer | HttpPlatform.HttpPlatform | Etag.Generator | FileSystem.FileSystem | Path.Path | Scope.Scope
  >()
  const requestContext = Context.pick(
    HttpServer.HttpServer,
    HttpPlatform.HttpPlatform,
    Etag.Generator,
    FileSystem.FileSystem,
    Path.Path,
    Scope.Scope
  )(context)
  // In place of the context, not merged into it: `Effect.provide` would keep every service.
  yield* Effect.mapInputContext(HttpServer.serveEffect(app), (_: Context.Context<never>) => requestContext)
})).pipe(Layer.provide([HttpApiBuilder.Router.Live, HttpApiBuilder.Middleware.layer]))

export const makeServerLayer = <E>(options: ServeOptions, wiring: AppWiring<E>) => {
  const server = http.createServer({ keepAliveTimeout: 5_000, maxHeaderSize: MAX_HEADER_BYTES })
  server.on("clientError", answerClientError)
  const grace = options.shutdownGraceMs ?? 10_000
  // A server that never listened (its port taken, its database out of reach) has no shutdown to report.
  let listened = false
  /** A layer whose release logs `line`: placed under a layer, it logs once that layer has closed. */
  const logWhenReleased = (line: string) =>
    Layer.scopedDiscard(Effect.addFinalizer(() => Effect.sync(() => listened && options.log?.(line))))

  // Released before the server's own finalizer (which waits for open connections): after
  // the grace period, connections that are still open are closed.
  const cutOff = Layer.scopedDiscard(Effect.addFinalizer(() =>
    Effect.sync(() => {
      server.closeIdleConnections()
      setTimeout(() => server.closeAllConnections(), grace).unref()
    })
  ))

  // After the port is known (it may be 0): the first account's origins name it.
  const bootstrap = (port: number | undefined) =>
    options.bootstrap === false ? Effect.void : Effect.flatMap(
      bootstrapAccount(options.publicUrl === undefined && port !== undefined ? devOrigins(port) : []),
      (created) =>
        Effect.sync(() => {
          if (created !== undefined) options.onFirstAccount?.(created)
        })
    )

  // Once the API's listener is in place: the handlers beside it take the paths they claim,
  // and the direct read lane the plain reads (without a mount prefix, which only the
  // pipeline strips).
  const announce = Layer.effectDiscard(Effect.gen(function*() {
    const address = (yield* HttpServer.HttpServer).address
    const url = address._tag === "TcpAddress" ? `http://${address.hostname}:${address.port}` : `unix:${address.path}`
    yield* bootstrap(address._tag === "TcpAddress" ? address.port : undefined)
    const side = wiring.beside === undefined ? undefined : yield* wiring.beside(options.publicUrl ?? url)
    const lane = options.prefix === undefined ? yield* directReadLane : undefined
    const api = server.listeners("request") as Array<http.RequestListener>
    server.removeAllListeners("request")
    server.on("request", (req: http.IncomingMessage, res: http.ServerResponse) => {
      const toApi = () => {
        for (const listener of api) listener(req, res)
      }
      const path = (req.url ?? "/").split("?", 1)[0]!
      if (path === FAVICON_PATH) serveFavicon(req, res)
      else if (side?.serves(path)) side.node(req, res)
      else if (lane !== undefined) lane(req, res, toApi)
      else toApi()
    })
    listened = true
    options.onListening?.(url)
  }))

  // Layers are released in the reverse order of their construction: the HTTP side (built
  // last) closes first and waits for its requests, then the dispatcher drains, then storage.
  const web = announce.pipe(
    Layer.provide(cutOff),
    Layer.provide(serveApi.pipe(
      Layer.provide(makeAppLayer(options)),
      // A tracing span per request costs a third of a small request's time, and nothing reads them.
      HttpMiddleware.withTracerDisabledWhen(() => true)
    )),
    Layer.provide(NodeHttpServer.layerServer(() => server, { port: options.port, host: options.host })),
    // What requests run with (`serveApi`), without the rest of NodeContext: its terminal
    // (which opens stdin), command executor and worker manager serve no request.
    Layer.provide(Layer.mergeAll(NodeHttpPlatform.layer, Etag.layerWeak, NodePath.layer).pipe(Layer.provideMerge(NodeFileSystem.layer))),
    Layer.provide(logWhenReleased("HTTP server closed: in-flight requests finished"))
  )

  return web.pipe(
    Layer.provide(wiring.dispatcher),
    Layer.provide(logWhenReleased("webhook dispatcher stopped: attempts in flight finished and recorded")),
    Layer.provide(wiring.services),
    Layer.provide(logWhenReleased("storage closed; exiting"))
  )
}
