/**
 * The API as handlers to mount inside another server: a Fetch handler
 * `(Request) => Promise<Response>` and a Node `(req, res)` handler over one set of services,
 * under any path prefix. compose.ts's `createHttpHandler` wires them to storage. With
 * `oauth`, the Node handler also serves the handler beside the API (the authorization
 * server, which speaks only Node's `(req, res)`), under the same prefix. Without a prefix, the
 * Node handler serves plain reads through the direct read lane (directReads.ts), as the server does.
 */
import { Etag, FileSystem, HttpApiBuilder, HttpApp, HttpMiddleware, HttpPlatform, type HttpRouter, Path } from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import { Context, Effect, Layer, ManagedRuntime, Option } from "effect"
import type * as http from "node:http"
import { Accounts } from "../../src/accounts/Accounts.js"
import type { Account, AccountCreate, AccountUpdate, AccountWithKeys } from "../../src/accounts/account.js"
import { isSlotwiseFailure } from "../../src/domain/errors.js"
import { toSlotwiseError } from "../../library.js"
import { withoutTrailingSlash } from "../../src/ports/trailingSlash.js"
import { type AppOptions, type AppWiring, makeAppLayer } from "./app.js"
import { directReadLane } from "./handlers/reads.js"

export interface SlotwiseHttpHandler {
  /** Fetch API handler (Deno, Bun, Cloudflare-style servers, `new Request(...)` in tests). */
  readonly fetch: (request: Request) => Promise<Response>
  /** Node `http` request listener. */
  readonly node: (req: http.IncomingMessage, res: http.ServerResponse) => void
  /** Creates an account with its four keys (the operator's `POST /admin/v1/accounts`). */
  readonly createAccount: (input: typeof AccountCreate.Encoded) => Promise<AccountWithKeys>
  /**
   * Changes an account's name, handle, plan, branding, allowed origins or rate limit (the
   * operator's `PATCH /admin/v1/accounts/{id}`).
   */
  readonly updateAccount: (id: string, input: typeof AccountUpdate.Encoded) => Promise<Account>
  /** Reads an account (the operator's `GET /admin/v1/accounts/{id}`). */
  readonly getAccount: (id: string) => Promise<Account>
  /** The account whose handle this is, or `null`: what a hosted page at `/book/{handle}` looks up. */
  readonly accountByHandle: (handle: string) => Promise<Account | null>
  /**
   * Stops the webhook dispatcher (attempts in flight finish and are recorded), then closes
   * storage; in-flight requests should be finished first.
   */
  readonly close: () => Promise<void>
}

export interface MountOptions extends AppOptions {
  /**
   * Serve the OAuth authorization server too (Node handler only). Its issuer is the public
   * URL the handler is reached at, prefix included: with `prefix: "/scheduling"`,
   * `https://app.example.com/scheduling`.
   */
  readonly oauth?: { readonly issuer: string } | undefined
}

const METADATA = "/.well-known/oauth-authorization-server"

/** The prefix without its trailing slash, checked against the issuer's path. */
const mountPrefix = (options: MountOptions): string => {
  const prefix = withoutTrailingSlash(options.prefix ?? "")
  if (options.oauth === undefined) return prefix
  if (!URL.canParse(options.oauth.issuer) || !/^https?:$/.test(new URL(options.oauth.issuer).protocol)) {
    throw new TypeError(`oauth.issuer must be an http(s) URL, got ${options.oauth.issuer}`)
  }
  const path = withoutTrailingSlash(new URL(options.oauth.issuer).pathname)
  if (path !== prefix) {
    throw new TypeError(
      `oauth.issuer must end with the mount prefix: its path is "${path}", the prefix "${prefix}" (e.g. https://app.example.com${prefix})`
    )
  }
  return prefix
}

/** Builds the API's handlers over the services and dispatcher the composition root made. */
export const makeHttpHandler = async <E>(options: MountOptions, wiring: AppWiring<E>): Promise<SlotwiseHttpHandler> => {
  const prefix = mountPrefix(options)
  const runtime = ManagedRuntime.make(
    Layer.mergeAll(
      makeAppLayer(options),
      HttpApiBuilder.Router.Live,
      HttpApiBuilder.Middleware.layer,
      NodeHttpServer.layerContext,
      wiring.dispatcher
    ).pipe(Layer.provideMerge(wiring.services))
  )
  // The handlers' runtimes carry the fiber refs they are made under: as the server does
  // (server.ts), no tracing span per request, which costs much and which nothing reads.
  const { fetch, node, side, lane } = await runtime.runPromise(HttpMiddleware.withTracerDisabledWhenEffect(
    Effect.gen(function*() {
      const app = yield* HttpApiBuilder.httpApp
      // Requests run with the platform's services only, as the server's do (server.ts, `serveApi`).
      const requestContext = Context.pick(HttpPlatform.HttpPlatform, Etag.Generator, FileSystem.FileSystem, Path.Path)(
        yield* Effect.context<HttpRouter.HttpRouter.DefaultServices>()
      )
      // In place of the context, not merged into it: `Effect.provide` would keep every service.
      const node = yield* Effect.mapInputContext(NodeHttpServer.makeHandler(app), (_: Context.Context<never>) => requestContext)
      const fetch = HttpApp.toWebHandlerRuntime(
        yield* Effect.mapInputContext(
          Effect.runtime<HttpRouter.HttpRouter.DefaultServices>(),
          (_: Context.Context<never>) => requestContext
        )
      )(app)
      const side = options.oauth !== undefined && wiring.beside !== undefined ? yield* wiring.beside(options.oauth.issuer) : undefined
      // The direct read lane serves plain reads on node:http; it knows no mount prefix.
      const lane = prefix === "" ? yield* directReadLane : undefined
      return { fetch, node, side, lane }
    }),
    () => true
  ))
  // The side handler is given paths without the prefix; RFC 8414 places the metadata of an
  // issuer with a path at /.well-known/oauth-authorization-server/<path>, outside the prefix.
  const sidePath = (path: string): string | undefined => {
    if (prefix !== "" && path === `${METADATA}${prefix}`) return METADATA
    if (prefix === "") return path
    return path.startsWith(`${prefix}/`) ? path.slice(prefix.length) : undefined
  }
  const api: SlotwiseHttpHandler["node"] = side === undefined ? node : (req, res) => {
    const [path, query] = splitUrl(req.url ?? "/")
    const inner = sidePath(path)
    if (inner !== undefined && side.serves(inner)) {
      req.url = `${inner}${query}`
      side.node(req, res)
    } else node(req, res)
  }
  const withAccounts = <A, E>(use: (accounts: Accounts) => Effect.Effect<A, E>) =>
    runtime.runPromise(Effect.flatMap(Accounts, use).pipe(Effect.mapError((e) => (isSlotwiseFailure(e) ? toSlotwiseError(e) : e))))
  return {
    fetch: (request) => fetch(request),
    node: lane === undefined ? api : (req, res) => lane(req, res, () => api(req, res)),
    createAccount: (input) => withAccounts((accounts) => accounts.create(input)),
    updateAccount: (id, input) => withAccounts((accounts) => accounts.update(id, input)),
    getAccount: (id) => withAccounts((accounts) => accounts.get(id)),
    accountByHandle: (handle) => withAccounts((accounts) => Effect.map(accounts.byHandle(handle), Option.getOrNull)),
    close: () => runtime.dispose()
  }
}

const splitUrl = (url: string): [string, string] => {
  const at = url.indexOf("?")
  return at === -1 ? [url, ""] : [url.slice(0, at), url.slice(at)]
}
