/**
 * A server for OAuth tests over real HTTP on 127.0.0.1: the mounted API (the same layers as
 * adapters/http/mount.ts) and the authorization server side by side in one node:http server,
 * on one set of services, with an admin token, an account and a user.
 */
import { HttpApiBuilder } from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import { Effect, Layer, ManagedRuntime } from "effect"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import { makeAppLayer } from "../../adapters/http/app.js"
import { makeOAuthHandler } from "../../adapters/oauth/server.js"
import { httpServicesLayer, type StorageChoice } from "../../compose.js"
import { Accounts } from "../../src/accounts/Accounts.js"
import type { AccountWithKeys } from "../../src/accounts/account.js"
import type { User } from "../../src/users/user.js"
import type { OAuthGrants } from "../../src/oauth/OAuthGrants.js"
import type { Storage } from "../../src/ports/storage.js"
import { Users } from "../../src/users/Users.js"
import { ADMIN_TOKEN, client, type Client } from "../http/harness.js"

export { ADMIN_TOKEN }
export const PASSWORD = "correct horse battery staple"

/** An account with a user who can sign in, and clients on its secret keys. */
export interface OAuthTestAccount {
  readonly account: AccountWithKeys
  readonly user: User
  /** The sandbox and production secret keys of the account. */
  readonly sandbox: Client
  readonly production: Client
}

export interface OAuthTestServer extends OAuthTestAccount {
  readonly url: string
  readonly admin: Client
  /** Another account on the same server, with its own user (signing in with PASSWORD). */
  readonly addAccount: (name: string, email: string) => Promise<OAuthTestAccount>
  /** Runs an effect on the server's own services (to look at or alter what it stored). */
  readonly run: <A, E>(effect: Effect.Effect<A, E, Storage | OAuthGrants>) => Promise<A>
  readonly close: () => Promise<void>
}

export interface OAuthServerOptions {
  readonly storage?: StorageChoice
  readonly refreshGraceSeconds?: number
  readonly plan?: "free" | "pro" | "business"
  /** The issuer, from the listening URL (default: that URL). */
  readonly issuer?: (url: string) => string
  /** Sign-in attempts per minute (default: generous, so tests signing in often are not throttled). */
  readonly signInLimits?: { readonly perEmail: number; readonly perAddress: number }
}

export const startOAuthServer = async (options: OAuthServerOptions = {}): Promise<OAuthTestServer> => {
  const runtime = ManagedRuntime.make(
    Layer.mergeAll(
      makeAppLayer({ adminToken: ADMIN_TOKEN }),
      HttpApiBuilder.Router.Live,
      HttpApiBuilder.Middleware.layer,
      NodeHttpServer.layerContext
    ).pipe(Layer.provideMerge(httpServicesLayer({ storage: options.storage ?? "memory" })))
  )
  const api = await runtime.runPromise(Effect.flatMap(HttpApiBuilder.httpApp, NodeHttpServer.makeHandler))
  let oauth: { readonly serves: (path: string) => boolean; readonly node: http.RequestListener } | undefined
  const server = http.createServer((req, res) => {
    const path = (req.url ?? "/").split("?", 1)[0]!
    if (oauth !== undefined && oauth.serves(path)) oauth.node(req, res)
    else api(req, res)
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  oauth = await runtime.runPromise(makeOAuthHandler({
    issuer: options.issuer?.(url) ?? url,
    refreshGraceSeconds: options.refreshGraceSeconds,
    signInLimits: options.signInLimits ?? { perEmail: 1000, perAddress: 1000 }
  }))
  const addAccount = async (name: string, email: string): Promise<OAuthTestAccount> => {
    const { account, user } = await runtime.runPromise(Effect.gen(function*() {
      const account = yield* (yield* Accounts).create({ name, plan: options.plan ?? "business" })
      const user = yield* (yield* Users).create(account.account.id, { email, name: `Owner of ${name}`, password: PASSWORD, role: "owner" })
      return { account, user }
    }))
    return {
      account,
      user,
      sandbox: client(url, account.keys.sandbox.secret),
      production: client(url, account.keys.production.secret)
    }
  }
  return {
    url,
    ...(await addAccount("Studio", "Owner@Example.com")),
    addAccount,
    run: (effect) => runtime.runPromise(effect),
    admin: client(url, ADMIN_TOKEN),
    close: async () => {
      server.closeAllConnections()
      await new Promise<void>((resolve) => server.close(() => resolve()))
      await runtime.dispose()
    }
  }
}
