/**
 * The authorization server (docs/api.md §7): oidc-provider (a certified implementation; no
 * protocol or cryptography is written here) configured for the authorization code grant
 * with PKCE S256, refresh-token rotation, revocation (RFC 7009) and introspection
 * (RFC 7662); the RFC 8414 metadata; and the sign-in and consent pages on its interaction
 * API. `makeOAuthHandler` gives a Node `(req, res)` handler to mount beside the API for the
 * paths `serves` accepts.
 *
 * Paths are relative to the issuer: with the issuer `https://host/scheduling` the handler is
 * given `/oauth/token` for `https://host/scheduling/oauth/token` (the caller strips the
 * prefix, as a path-stripping proxy or the mounted handler does), and the URLs it makes
 * (redirects to the pages, their forms, cookie paths) carry the prefix.
 */
import { Effect, Option, Runtime } from "effect"
import { createHmac, generateKeyPairSync } from "node:crypto"
import type { IncomingMessage, ServerResponse } from "node:http"
import type { InteractionDetails } from "oidc-provider"
import { constantTimeEqual, sha256Hex } from "../../src/auth/crypto.js"
import { type Scope, SCOPES } from "../../src/keys/apiKey.js"
import { makeId } from "../../src/domain/ids.js"
import { SCOPE_DESCRIPTIONS } from "../../src/oauth/oauthClient.js"
import { containsNulOrLoneSurrogate } from "../../src/domain/validation.js"
import { emailKey } from "../../src/users/user.js"
import { OAuthClients } from "../../src/oauth/OAuthClients.js"
import { OAuthGrants } from "../../src/oauth/OAuthGrants.js"
import type { Storage } from "../../src/ports/storage.js"
import { withoutTrailingSlash } from "../../src/ports/trailingSlash.js"
import { RateLimiter } from "../../src/ratelimit/RateLimiter.js"
import { isSignInKey, SIGN_IN_LIMITS, type SignInLimits, signInPolicies } from "../../src/ratelimit/policy.js"
import { Users } from "../../src/users/Users.js"
import { clientAddressOf } from "../http/clientAddress.js"
import { makeAdapterFactory } from "./adapter.js"
import { consentPage, contentSecurityPolicy, errorPage, SECURITY_HEADERS, sendHtml, signInPage } from "./pages.js"
import { basicCredentials, INTERACTION, peekForm, PROTOCOL_ENDPOINTS, readForm, refusalOf } from "./requests.js"
import {
  compareHashedClientSecrets,
  cookieKeys,
  importProvider,
  PROVIDER_FEATURES,
  PROVIDER_ROUTES,
  PROVIDER_TTL,
  secureCookies,
  serverMetadata
} from "./provider.js"

export const METADATA_PATH = "/.well-known/oauth-authorization-server"
export { ACCESS_TOKEN_TTL_SECONDS, CODE_TTL_SECONDS, REFRESH_TOKEN_TTL_SECONDS } from "./provider.js"
/** How long a just-rotated refresh token still works (two refreshes racing; see adapter.ts). */
export const DEFAULT_REFRESH_GRACE_SECONDS = 15
/** Sign-in attempts per minute (the figures and counters are rate-limit policy, in the core). */
export const SIGN_IN_LIMIT_PER_EMAIL = SIGN_IN_LIMITS.perEmail
export const SIGN_IN_LIMIT_PER_ADDRESS = SIGN_IN_LIMITS.perAddress
export { isSignInKey }

export interface OAuthServerOptions {
  /** The server's public base URL, e.g. `https://api.example.com` (the issuer), with the path it is served under if any. */
  readonly issuer: string
  readonly refreshGraceSeconds?: number | undefined
  /** Sign-in attempts allowed per minute per account and email, and per client address. */
  readonly signInLimits?: SignInLimits | undefined
  /** Behind a TLS-terminating proxy: trust X-Forwarded-Proto/-For. */
  readonly trustProxy?: boolean | undefined
}

export interface OAuthHandler {
  /** Whether the handler answers this path (`/.well-known/oauth-authorization-server`, `/oauth/…`). */
  readonly serves: (path: string) => boolean
  readonly node: (req: IncomingMessage, res: ServerResponse) => void
}

type OAuthServices = Storage | OAuthClients | OAuthGrants | Users | RateLimiter

const serves = (path: string) => path === METADATA_PATH || path.startsWith("/oauth/")

/**
 * The handler beside the API. The provider (its import, its cookie keys from storage) is
 * built on the first request for one of its paths, not with the server: a server that is
 * never asked for OAuth never pays for it, and `listening` comes sooner. A build that fails
 * (storage unreachable) answers 503 and is tried again on the next request.
 */
export const makeOAuthHandler = (options: OAuthServerOptions): Effect.Effect<OAuthHandler, never, OAuthServices> =>
  Effect.map(Effect.runtime<OAuthServices>(), (runtime) => {
    let built: Promise<OAuthHandler> | undefined
    const node = (req: IncomingMessage, res: ServerResponse): void => {
      built ??= Runtime.runPromise(runtime)(buildOAuthHandler(options))
      built.then((handler) => handler.node(req, res), (error: unknown) => {
        built = undefined
        void Effect.runFork(Effect.logError("slotwise oauth: the authorization server could not start", error))
        if (res.headersSent) return res.end()
        res.writeHead(503, { "content-type": "application/json", "cache-control": "no-store", "retry-after": "1" })
        res.end(JSON.stringify({ error: "temporarily_unavailable", error_description: "the authorization server is starting; try again" }))
      })
    }
    return { serves, node }
  })

const buildOAuthHandler = (options: OAuthServerOptions) =>
  Effect.gen(function*() {
    const runtime = yield* Effect.runtime<OAuthServices>()
    const run = Runtime.runPromise(runtime)
    const users = yield* Users
    const clients = yield* OAuthClients
    const grants = yield* OAuthGrants
    const limiter = yield* RateLimiter
    const keys = yield* cookieKeys
    const Adapter = yield* makeAdapterFactory({ refreshGraceSeconds: options.refreshGraceSeconds ?? DEFAULT_REFRESH_GRACE_SECONDS })
    const signInLimits = options.signInLimits ?? SIGN_IN_LIMITS
    const issuer = withoutTrailingSlash(options.issuer)
    const mountPath = withoutTrailingSlash(new URL(issuer).pathname)
    // Signs only ID tokens, which are never issued (no `openid` scope): a key per process is enough.
    const signingKey = generateKeyPairSync("ec", { namedCurve: "P-256" }).privateKey.export({ format: "jwk" })

    const { default: Provider, interactionPolicy } = yield* Effect.promise(importProvider)

    /**
     * The account boundary, on every step that names a user: a user of another account than
     * the client's is no account at all here. At the authorization endpoint that makes a
     * session of another account's user ask for a new sign-in (the check below); at the token
     * endpoint the code or refresh token is refused with invalid_grant.
     */
    const findAccount = async (ctx: any, sub: string) => {
      const clientId: unknown = ctx?.oidc?.client?.clientId
      if (typeof clientId !== "string") return undefined
      const tenant = await run(grants.tenantOfPair(sub, clientId))
      return tenant === undefined ? undefined : { accountId: sub, claims: () => ({ sub }) }
    }
    const policy = interactionPolicy.base()
    policy.get("login")!.checks.add(
      new interactionPolicy.Check(
        "account_boundary",
        "the signed-in user belongs to another account than the client",
        (ctx: any) => ctx.oidc.session.accountId !== undefined && ctx.oidc.account === undefined
      )
    )

    const provider = new Provider(issuer, {
      adapter: Adapter,
      findAccount,
      scopes: [...SCOPES],
      claims: { openid: ["sub"] },
      responseTypes: ["code"],
      pkce: { required: () => true },
      features: PROVIDER_FEATURES,
      routes: PROVIDER_ROUTES,
      ttl: PROVIDER_TTL,
      jwks: { keys: [signingKey] },
      cookies: { keys: [...keys] },
      rotateRefreshToken: true,
      expiresWithSession: () => false,
      issueRefreshToken: (_ctx: unknown, client: { grantTypeAllowed(t: string): boolean }) => client.grantTypeAllowed("refresh_token"),
      allowOmittingSingleRegisteredRedirectUri: false,
      clientBasedCORS: () => false,
      extraClientMetadata: { properties: ["urn:slotwise:environment"] },
      interactions: { policy, url: (_ctx: unknown, interaction: { uid: string }) => `${mountPath}/oauth/interaction/${interaction.uid}` },
      loadExistingGrant: async (ctx: any) => {
        const clientId: string = ctx.oidc.client.clientId
        const grantId: string | undefined = ctx.oidc.result?.consent?.grantId ?? ctx.oidc.session.grantIdFor(clientId) ??
          (await run(grants.existing(ctx.oidc.session.accountId, clientId)))?.id
        return grantId === undefined ? undefined : ctx.oidc.provider.Grant.find(grantId)
      },
      renderError: (ctx: any, out: { error: string; error_description?: string }) => {
        ctx.type = "html"
        ctx.set(SECURITY_HEADERS)
        ctx.body = errorPage("This request cannot continue", out.error_description ?? out.error, out.error)
      }
    })
    provider.proxy = options.trustProxy === true
    if (new URL(issuer).protocol === "https:") secureCookies(provider)
    compareHashedClientSecrets(provider, (presented) => run(sha256Hex(presented)))
    const callback = provider.callback()

    const metadata = JSON.stringify(serverMetadata(issuer))

    const csrfOf = (uid: string) => createHmac("sha256", keys[0]!).update(`csrf:${uid}`).digest("base64url")
    const addressOf = (req: IncomingMessage) => clientAddressOf(req.headers, req.socket.remoteAddress, options.trustProxy === true)

    const clientOf = (details: InteractionDetails) => run(clients.resolve(String(details.params.client_id ?? "")))

    const showPage = async (
      res: ServerResponse,
      details: InteractionDetails,
      error?: { status: number; message: string; email?: string }
    ) => {
      const found = await clientOf(details)
      if (found === undefined) return sendHtml(res, 400, errorPage("Unknown application", "This application is no longer registered."))
      const base = `${mountPath}/oauth/interaction/${details.uid}`
      const csp = { "content-security-policy": contentSecurityPolicy(String(details.params.redirect_uri ?? "")) }
      if (details.prompt.name === "login") {
        return sendHtml(
          res,
          error?.status ?? 200,
          signInPage({
            action: `${base}/login`,
            csrf: csrfOf(details.uid),
            clientName: found.client.name,
            email: error?.email,
            error: error?.message
          }),
          csp
        )
      }
      const missing = (details.prompt.details.missingOIDCScope as ReadonlyArray<string> | undefined) ?? []
      const scopes = missing.filter((s): s is Scope => s in SCOPE_DESCRIPTIONS)
      const user = await run(users.lookup(details.session?.accountId ?? ""))
      return sendHtml(
        res,
        200,
        consentPage({
          action: `${base}/confirm`,
          abort: `${base}/abort`,
          csrf: csrfOf(details.uid),
          clientName: found.client.name,
          environment: found.client.environment,
          userEmail: Option.match(user, { onNone: () => "", onSome: (u) => u.email }),
          scopes: scopes.map((scope) => ({ scope, description: SCOPE_DESCRIPTIONS[scope] }))
        }),
        csp
      )
    }

    /**
     * Someone else signing in ends the session of whoever was signed in before in this
     * browser (a user of another account, say), here rather than on oidc-provider's
     * scripted log-out page, so the new sign-in goes straight on to consent.
     */
    const endEarlierSession = async (details: InteractionDetails, userId: string) => {
      const earlier = details.session
      if (earlier?.accountId === undefined || earlier.accountId === userId) return
      if (earlier.cookie !== undefined) await (await provider.Session.find(earlier.cookie))?.destroy()
      details.session = undefined
      await details.save(Math.max(1, details.exp - Math.floor(Date.now() / 1000)))
    }

    const signIn = async (req: IncomingMessage, res: ServerResponse, details: InteractionDetails, form: URLSearchParams) => {
      const email = (form.get("email") ?? "").slice(0, 254)
      const password = (form.get("password") ?? "").slice(0, 256)
      const found = await clientOf(details)
      if (found === undefined) return sendHtml(res, 400, errorPage("Unknown application", "This application is no longer registered."))
      if (containsNulOrLoneSurrogate(email) || containsNulOrLoneSurrogate(password)) {
        return showPage(res, details, {
          status: 400,
          message: "The email or password contains a character that is not allowed (NUL or an unpaired surrogate)."
        })
      }
      const accountId = found.tenant.account_id
      const [emailPolicy, addressPolicy] = signInPolicies(accountId, emailKey(email), addressOf(req), signInLimits)
      // Both counters spend the attempt; either one spent refuses it, for as long as the longer wait.
      const refusals = (await run(Effect.all([limiter.count(emailPolicy), limiter.count(addressPolicy)]))).flatMap((c) => c.refusal ?? [])
      if (refusals.length > 0) {
        const wait = Math.max(...refusals.map((refusal) => refusal.retry_after_seconds))
        res.setHeader("retry-after", String(wait))
        return showPage(res, details, { status: 429, message: `Too many attempts. Try again in ${wait} seconds.`, email })
      }
      const user = email === "" || password === "" ? undefined : await run(users.verify(accountId, email, password))
      if (user === undefined) return showPage(res, details, { status: 401, message: "Wrong email or password.", email })
      await endEarlierSession(details, user.id)
      await provider.interactionFinished(req, res, { login: { accountId: user.id } }, { mergeWithLastSubmission: false })
    }

    const confirm = async (req: IncomingMessage, res: ServerResponse, details: InteractionDetails) => {
      const accountId = details.session?.accountId
      const clientId = String(details.params.client_id ?? "")
      if (accountId === undefined) return sendHtml(res, 400, errorPage("Sign in first", "This request has no signed-in user."))
      if ((await run(grants.tenantOfPair(accountId, clientId))) === undefined) {
        return sendHtml(
          res,
          403,
          errorPage(
            "Sign in again",
            "You are signed in to another account than this application's. Go back to the application and start again."
          )
        )
      }
      const existing = details.grantId !== undefined ? await provider.Grant.find(details.grantId) : undefined
      const grant = existing ?? new provider.Grant({ jti: makeId("grant", Date.now()), accountId, clientId })
      const missing = (details.prompt.details.missingOIDCScope as ReadonlyArray<string> | undefined) ?? []
      if (missing.length > 0) grant.addOIDCScope(missing.join(" "))
      const grantId = await grant.save()
      await provider.interactionFinished(req, res, { consent: { grantId } }, { mergeWithLastSubmission: true })
    }

    /** The redirect URI of an authorization request when its client registered it exactly. */
    const trustedRedirect = async (params: URLSearchParams) => {
      const clientId = params.get("client_id") ?? ""
      const redirectUri = params.get("redirect_uri") ?? ""
      if (clientId === "" || redirectUri === "" || containsNulOrLoneSurrogate(clientId) || containsNulOrLoneSurrogate(redirectUri))
        return undefined
      const found = await run(clients.resolve(clientId))
      return found?.client.redirect_uris.includes(redirectUri) === true ? redirectUri : undefined
    }

    const refuse = async (res: ServerResponse, path: string, params: URLSearchParams, description: string) => {
      if (path !== "/oauth/authorize") {
        res.writeHead(400, { "content-type": "application/json; charset=utf-8", "cache-control": "no-store", pragma: "no-cache" })
        return res.end(JSON.stringify({ error: "invalid_request", error_description: description }))
      }
      // As RFC 6749 §4.1.2.1 says: an error page unless the client and its redirect URI can be trusted.
      const redirectUri = await trustedRedirect(params)
      if (redirectUri === undefined) return sendHtml(res, 400, errorPage("This request cannot continue", description, "invalid_request"))
      const target = new URL(redirectUri)
      target.searchParams.set("error", "invalid_request")
      target.searchParams.set("error_description", description)
      const state = params.get("state")
      if (state !== null && !containsNulOrLoneSurrogate(state)) target.searchParams.set("state", state)
      target.searchParams.set("iss", issuer)
      res.writeHead(303, { location: target.href, "cache-control": "no-store", "content-length": "0" })
      res.end()
    }

    /** The protocol endpoints: their parameters checked, then oidc-provider. */
    const protocol = async (req: IncomingMessage, res: ServerResponse, path: string) => {
      const params = new URLSearchParams((req.url ?? "").split("?").slice(1).join("?"))
      if (req.method === "POST" && String(req.headers["content-type"] ?? "").startsWith("application/x-www-form-urlencoded")) {
        for (const [name, value] of (await peekForm(req)) ?? []) params.append(name, value)
      }
      const refusal = refusalOf(path, params, basicCredentials(req.headers.authorization))
      if (refusal !== undefined) return refuse(res, path, params, refusal)
      callback(req, res)
    }

    const interaction = async (req: IncomingMessage, res: ServerResponse, uid: string, action: string | undefined) => {
      let details: InteractionDetails
      try {
        details = await provider.interactionDetails(req, res)
      } catch {
        return sendHtml(res, 400, errorPage("This sign-in has expired", "Go back to the application and start again."))
      }
      if (details.uid !== uid)
        return sendHtml(res, 400, errorPage("This sign-in has expired", "Go back to the application and start again."))
      if (action === undefined) {
        if (req.method !== "GET")
          return sendHtml(res, 405, errorPage("Method not allowed", "Use the form."), { allow: "GET" })
        return showPage(res, details)
      }
      if (req.method !== "POST")
        return sendHtml(res, 405, errorPage("Method not allowed", "Use the form."), { allow: "POST" })
      const form = await readForm(req)
      const csrf = form?.get("csrf") ?? ""
      if (form === undefined || !constantTimeEqual(csrf, csrfOf(uid))) {
        return sendHtml(
          res,
          403,
          errorPage("Request refused", "The form was not sent from this page (CSRF token missing or wrong). Reload the page and try again.")
        )
      }
      if (action === "abort") {
        return provider.interactionFinished(req, res, {
          error: "access_denied",
          error_description: "the user denied the request"
        }, { mergeWithLastSubmission: false })
      }
      if (action === "login") {
        if (details.prompt.name !== "login")
          return showPage(res, details)
        return signIn(req, res, details, form)
      }
      if (details.prompt.name !== "consent") return showPage(res, details)
      return confirm(req, res, details)
    }

    const node = (req: IncomingMessage, res: ServerResponse): void => {
      const path = (req.url ?? "/").split("?", 1)[0]!
      if (path === METADATA_PATH) {
        if (req.method !== "GET" && req.method !== "HEAD") {
          res.writeHead(405, { allow: "GET, HEAD", "content-type": "application/json" })
          res.end(JSON.stringify({ error: "invalid_request", error_description: "use GET" }))
          return
        }
        res.writeHead(200, {
          "content-type": "application/json",
          "cache-control": "public, max-age=3600",
          "access-control-allow-origin": "*"
        })
        res.end(req.method === "HEAD" ? undefined : metadata)
        return
      }
      const m = INTERACTION.exec(path)
      if (m !== null) {
        interaction(req, res, m[1]!, m[2]).catch((error: unknown) => {
          if (!res.headersSent) sendHtml(res, 500, errorPage("Something went wrong", "Please try again."))
          else res.end()
          void Effect.runFork(Effect.logError("slotwise oauth: interaction failed", error))
        })
        return
      }
      // oidc-provider finds its mount path as what the original URL has before `req.url`.
      if (mountPath !== "") (req as IncomingMessage & { originalUrl?: string }).originalUrl = `${mountPath}${req.url ?? "/"}`
      if (!PROTOCOL_ENDPOINTS.has(path)) return callback(req, res)
      protocol(req, res, path).catch((error: unknown) => {
        if (!res.headersSent) {
          res.writeHead(503, { "content-type": "application/json", "cache-control": "no-store", "retry-after": "1" })
          res.end(JSON.stringify({ error: "temporarily_unavailable", error_description: "try again" }))
        } else res.end()
        void Effect.runFork(Effect.logError("slotwise oauth: request failed", error))
      })
    }

    return { serves, node } satisfies OAuthHandler
  })
