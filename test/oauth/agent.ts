/**
 * A minimal user agent for driving the sign-in and consent pages over plain HTTP: a cookie
 * jar (name, path), redirects followed by hand until they reach the client's redirect URI,
 * and the pages' forms read from their HTML.
 */
import * as oauth from "oauth4webapi"
import { PASSWORD, type OAuthTestServer } from "./harness.js"

interface Cookie {
  readonly value: string
  readonly path: string
}

export class UserAgent {
  private readonly jar = new Map<string, Cookie>()
  constructor(readonly base: string) {}

  private cookieHeader(path: string): string {
    return [...this.jar].filter(([, c]) => path.startsWith(c.path)).map(([name, c]) => `${name}=${c.value}`).join("; ")
  }

  private store(response: Response) {
    for (const line of response.headers.getSetCookie()) {
      const [pair, ...attributes] = line.split(";").map((s) => s.trim())
      const eq = pair!.indexOf("=")
      const name = pair!.slice(0, eq)
      const value = pair!.slice(eq + 1)
      const path = attributes.find((a) => a.toLowerCase().startsWith("path="))?.slice(5) ?? "/"
      const expired = attributes.some((a) => /^max-age=0$/i.test(a) || (/^expires=/i.test(a) && Date.parse(a.slice(8)) <= Date.now()))
      if (expired || value === "") this.jar.delete(name)
      else this.jar.set(name, { value, path })
    }
  }

  async request(url: string, init: { method?: string; form?: Record<string, string> } = {}): Promise<Response> {
    const target = new URL(url, this.base)
    const headers: Record<string, string> = {}
    const cookie = this.cookieHeader(target.pathname)
    if (cookie !== "") headers.cookie = cookie
    let body: string | undefined
    if (init.form !== undefined) {
      body = new URLSearchParams(init.form).toString()
      headers["content-type"] = "application/x-www-form-urlencoded"
    }
    const response = await fetch(target, {
      method: init.method ?? (body === undefined ? "GET" : "POST"),
      headers,
      body: body ?? null,
      redirect: "manual"
    })
    this.store(response)
    return response
  }

  /** Follows redirects on this server; returns the final response, or the URL outside it. */
  async follow(response: Response): Promise<{ readonly response: Response; readonly external?: URL }> {
    let current = response
    for (let i = 0; i < 10; i++) {
      const location = current.headers.get("location")
      if (current.status < 300 || current.status >= 400 || location === null) return { response: current }
      const next = new URL(location, this.base)
      const root = new URL(this.base)
      if (next.origin !== root.origin || !next.pathname.startsWith(`${root.pathname.replace(/\/$/, "")}/oauth/`))
        return { response: current, external: next }
      await current.arrayBuffer()
      current = await this.request(next.href)
    }
    throw new Error("too many redirects")
  }
}

export const csrfOf = (html: string): string => {
  const m = /name="csrf" value="([^"]+)"/.exec(html)
  if (m === null) throw new Error(`no CSRF field in ${html.slice(0, 500)}`)
  return m[1]!
}

export const formAction = (html: string, label: string): string => {
  const forms = html.split("<form").slice(1)
  const form = forms.find((f) => f.includes(`>${label}</button>`))
  if (form === undefined) throw new Error(`no form with ${label}`)
  return /action="([^"]+)"/.exec(form)![1]!
}

export interface ClientSetup {
  readonly as: oauth.AuthorizationServer
  readonly client: oauth.Client
  readonly auth: oauth.ClientAuth
  readonly redirectUri: string
  readonly id: string
  readonly secret: string | null
}

/** What the helpers need of a server: its URL, the account's secret keys and the user who signs in. */
export type OAuthSite = Pick<OAuthTestServer, "url" | "sandbox" | "production"> & { readonly user: { readonly email: string } }

export const REDIRECT_URI = "http://127.0.0.1:9/callback"

export const discover = async (url: string) => {
  const issuer = new URL(url)
  const response = await oauth.discoveryRequest(issuer, { algorithm: "oauth2", [oauth.allowInsecureRequests]: true })
  return oauth.processDiscoveryResponse(issuer, response)
}

/** Registers a client through /v1/oauth-clients with the given key's client. */
export const registerClient = async (
  server: OAuthSite,
  options: { type?: "confidential" | "public"; scopes?: ReadonlyArray<string>; environment?: "sandbox" | "production"; name?: string } = {}
): Promise<ClientSetup> => {
  const api = options.environment === "production" ? server.production : server.sandbox
  const created = await api.post("/v1/oauth-clients", {
    name: options.name ?? "Acme Calendar Sync",
    type: options.type ?? "confidential",
    redirect_uris: [REDIRECT_URI],
    ...(options.scopes !== undefined ? { scopes: options.scopes } : {})
  })
  if (created.status !== 201) throw new Error(`client not created: ${created.text}`)
  const as = await discover(server.url)
  const secret: string | null = created.json.client_secret
  return {
    as,
    client: { client_id: created.json.client_id },
    auth: secret === null ? oauth.None() : oauth.ClientSecretBasic(secret),
    redirectUri: REDIRECT_URI,
    id: created.json.id,
    secret
  }
}

export const insecure = { [oauth.allowInsecureRequests]: true } as const

export interface AuthorizeOptions {
  readonly scope?: string
  readonly email?: string
  readonly password?: string
  readonly decision?: "allow" | "deny"
  readonly agent?: UserAgent
  readonly extra?: Record<string, string>
  readonly pkce?: "S256" | "plain" | "none"
}

/** The authorization request's URL with PKCE, and its verifier and state. */
export const authorizeUrl = async (setup: ClientSetup, options: AuthorizeOptions = {}) => {
  const verifier = oauth.generateRandomCodeVerifier()
  const state = oauth.generateRandomState()
  const url = new URL(setup.as.authorization_endpoint!)
  url.searchParams.set("client_id", setup.client.client_id)
  url.searchParams.set("redirect_uri", setup.redirectUri)
  url.searchParams.set("response_type", "code")
  url.searchParams.set("scope", options.scope ?? "bookings:read services:read")
  url.searchParams.set("state", state)
  const pkce = options.pkce ?? "S256"
  if (pkce === "S256") {
    url.searchParams.set("code_challenge", await oauth.calculatePKCECodeChallenge(verifier))
    url.searchParams.set("code_challenge_method", "S256")
  } else if (pkce === "plain") {
    url.searchParams.set("code_challenge", verifier)
    url.searchParams.set("code_challenge_method", "plain")
  }
  for (const [k, v] of Object.entries(options.extra ?? {})) url.searchParams.set(k, v)
  return { url, verifier, state }
}

/**
 * Signs in and answers the consent page as a user would, from the authorization URL to the
 * redirect back to the client; returns the callback URL (code or error) and the verifier.
 */
export const authorize = async (server: OAuthSite, setup: ClientSetup, options: AuthorizeOptions = {}) => {
  const agent = options.agent ?? new UserAgent(server.url)
  const { url, verifier, state } = await authorizeUrl(setup, options)
  let step = await agent.follow(await agent.request(url.href))
  const pages: Array<"sign-in" | "consent"> = []
  const headers: Array<Headers> = []
  for (let i = 0; i < 4 && step.external === undefined; i++) {
    const html = await step.response.text()
    if (step.response.status !== 200)
      throw new Error(`page ${step.response.status}: ${html.replace(/<style>[^]*<\/style>/, "").slice(0, 900)}`)
    const csrf = csrfOf(html)
    headers.push(step.response.headers)
    if (html.includes(`name="password"`)) {
      pages.push("sign-in")
      const action = formAction(html, "Sign in")
      step = await agent.follow(
        await agent.request(action, {
          form: { csrf, email: options.email ?? server.user.email, password: options.password ?? PASSWORD }
        })
      )
    } else {
      pages.push("consent")
      const action = formAction(html, options.decision === "deny" ? "Deny" : "Allow")
      step = await agent.follow(await agent.request(action, { form: { csrf } }))
    }
  }
  if (step.external === undefined) throw new Error("never redirected back to the client")
  return { callback: step.external, verifier, state, agent, pages, headers }
}

/** The whole flow to tokens. */
export const obtainTokens = async (server: OAuthSite, setup: ClientSetup, options: AuthorizeOptions = {}) => {
  const { callback, verifier, state, agent, pages, headers } = await authorize(server, setup, options)
  const params = oauth.validateAuthResponse(setup.as, setup.client, callback, state)
  const response = await oauth.authorizationCodeGrantRequest(
    setup.as,
    setup.client,
    setup.auth,
    params,
    setup.redirectUri,
    verifier,
    insecure
  )
  const tokens = await oauth.processAuthorizationCodeResponse(setup.as, setup.client, response)
  return { tokens, agent, params, verifier, pages, headers }
}
