/** Bad input answered in the RFCs' form: error pages, error redirects and RFC 6749 §5.2 JSON. */
import * as oauth from "oauth4webapi"
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest"
import { authorize, authorizeUrl, insecure, obtainTokens, REDIRECT_URI, registerClient, UserAgent } from "./agent.js"
import { type OAuthTestServer, startOAuthServer } from "./harness.js"

let server: OAuthTestServer
beforeAll(async () => {
  server = await startOAuthServer({ refreshGraceSeconds: 15 })
})
afterAll(() => server.close())
afterEach(() => {
  vi.useRealTimers()
})

/** Moves Date (oidc-provider's clock and Effect's default clock) forward. */
const advance = (ms: number) => {
  const now = Date.now()
  vi.useFakeTimers({ toFake: ["Date"] })
  vi.setSystemTime(now + ms)
}

const tokenRequest = (setup: { as: oauth.AuthorizationServer }, body: Record<string, string>, auth?: string) =>
  fetch(setup.as.token_endpoint!, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded", ...(auth !== undefined ? { authorization: auth } : {}) },
    body: new URLSearchParams(body).toString()
  })

const basic = (id: string, secret: string) =>
  `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString("base64")}`

const bearer = (token: string, path = "/v1/services") =>
  fetch(`${server.url}${path}`, { headers: { authorization: `Bearer ${token}` } }).then(async (r) => ({
    status: r.status,
    json: await r.json().catch(() => undefined)
  }))

const expectOAuthError = async (response: Response, status: number, error: string) => {
  expect(response.headers.get("content-type")).toMatch(/^application\/json/)
  const body = await response.json()
  expect({ status: response.status, error: body.error }).toEqual({ status, error })
}

describe("the authorization endpoint", () => {
  it("answers an unregistered redirect URI with an error page, never a redirect", async () => {
    const setup = await registerClient(server)
    const { url } = await authorizeUrl(setup)
    url.searchParams.set("redirect_uri", "https://evil.example/callback")
    const response = await fetch(url, { redirect: "manual" })
    expect(response.status).toBe(400)
    expect(response.headers.get("location")).toBeNull()
    expect(response.headers.get("content-type")).toMatch(/^text\/html/)
    expect(await response.text()).toContain("redirect_uri")
  })

  it("answers an unknown client with an error page, never a redirect", async () => {
    const setup = await registerClient(server)
    const { url } = await authorizeUrl(setup)
    url.searchParams.set("client_id", "oac_01JZZZZZZZZZZZZZZZZZZZZZZZ")
    const response = await fetch(url, { redirect: "manual" })
    expect(response.status).toBe(400)
    expect(response.headers.get("location")).toBeNull()
    expect(await response.text()).toContain("invalid_client")
  })

  it.each(["none", "plain"] as const)("redirects with invalid_request when PKCE is %s", async (pkce) => {
    const setup = await registerClient(server)
    const { url, state } = await authorizeUrl(setup, { pkce })
    const response = await fetch(url, { redirect: "manual" })
    expect(response.status).toBe(303)
    const location = new URL(response.headers.get("location")!)
    expect(`${location.origin}${location.pathname}`).toBe(REDIRECT_URI)
    expect(location.searchParams.get("error")).toBe("invalid_request")
    expect(location.searchParams.get("state")).toBe(state)
  })

  it.each(["fragment", "form_post", "jwt", "query.jwt"])(
    "refuses response_mode=%s (the metadata names only query) with an error in the query",
    async (mode) => {
      const metadata = await (await fetch(`${server.url}/.well-known/oauth-authorization-server`)).json() as {
        response_modes_supported: Array<string>
      }
      expect(metadata.response_modes_supported).toEqual(["query"])
      const setup = await registerClient(server)
      const { url, state } = await authorizeUrl(setup, { extra: { response_mode: mode } })
      const response = await fetch(url, { redirect: "manual" })
      expect(response.status).toBe(303)
      const location = new URL(response.headers.get("location")!)
      expect(`${location.origin}${location.pathname}`).toBe(REDIRECT_URI)
      expect(location.hash).toBe("")
      expect(location.searchParams.get("error")).toBe("invalid_request")
      expect(location.searchParams.get("error_description")).toContain("response_mode")
      expect(location.searchParams.get("state")).toBe(state)
    }
  )

  it("accepts response_mode=query", async () => {
    const setup = await registerClient(server)
    const { callback } = await authorize(server, setup, { extra: { response_mode: "query" } })
    expect(callback.searchParams.get("code")).toBeTruthy()
  })

  it("refuses a scope the client may not ask for", async () => {
    const setup = await registerClient(server, { scopes: ["services:read"] })
    const { url } = await authorizeUrl(setup, { scope: "services:read bookings:write" })
    const response = await fetch(url, { redirect: "manual" })
    const location = new URL(response.headers.get("location")!)
    expect(location.searchParams.get("error")).toBe("invalid_scope")
  })
})

describe("the token endpoint", () => {
  it("refuses a wrong code verifier with invalid_grant", async () => {
    const setup = await registerClient(server)
    const { callback, state } = await authorize(server, setup)
    const params = oauth.validateAuthResponse(setup.as, setup.client, callback, state)
    const response = await oauth.authorizationCodeGrantRequest(
      setup.as,
      setup.client,
      setup.auth,
      params,
      setup.redirectUri,
      oauth.generateRandomCodeVerifier(),
      insecure
    )
    await expectOAuthError(response, 400, "invalid_grant")
  })

  it("revokes what a code issued when the code is replayed", async () => {
    const setup = await registerClient(server)
    const { tokens, params, verifier } = await obtainTokens(server, setup)
    expect((await bearer(tokens.access_token)).status).toBe(200)
    const replay = await oauth.authorizationCodeGrantRequest(
      setup.as,
      setup.client,
      setup.auth,
      params,
      setup.redirectUri,
      verifier,
      insecure
    )
    await expectOAuthError(replay, 400, "invalid_grant")
    expect((await bearer(tokens.access_token)).status).toBe(401)
    const refresh = await oauth.refreshTokenGrantRequest(setup.as, setup.client, setup.auth, tokens.refresh_token!, insecure)
    await expectOAuthError(refresh, 400, "invalid_grant")
  })

  it("refuses a code older than 10 minutes", async () => {
    const setup = await registerClient(server)
    const { callback, state, verifier } = await authorize(server, setup)
    const params = oauth.validateAuthResponse(setup.as, setup.client, callback, state)
    advance(10 * 60_000 + 1000)
    const response = await oauth.authorizationCodeGrantRequest(
      setup.as,
      setup.client,
      setup.auth,
      params,
      setup.redirectUri,
      verifier,
      insecure
    )
    await expectOAuthError(response, 400, "invalid_grant")
  })

  it("refuses a wrong client secret with invalid_client", async () => {
    const setup = await registerClient(server)
    const { callback, state, verifier } = await authorize(server, setup)
    const params = oauth.validateAuthResponse(setup.as, setup.client, callback, state)
    const response = await tokenRequest(setup, {
      grant_type: "authorization_code",
      code: params.get("code")!,
      redirect_uri: setup.redirectUri,
      code_verifier: verifier
    }, basic(setup.id, setup.secret!.slice(0, -1) + (setup.secret!.endsWith("x") ? "y" : "x")))
    await expectOAuthError(response, 401, "invalid_client")
  })

  it("stops accepting the old secret once it is rotated", async () => {
    const setup = await registerClient(server)
    const rotated = await server.sandbox.post(`/v1/oauth-clients/${setup.id}/rotate-secret`, {})
    expect(rotated.status).toBe(200)
    expect(rotated.json.client_secret).not.toBe(setup.secret)
    const { callback, state, verifier } = await authorize(server, setup)
    const params = oauth.validateAuthResponse(setup.as, setup.client, callback, state)
    const body = { grant_type: "authorization_code", code: params.get("code")!, redirect_uri: setup.redirectUri, code_verifier: verifier }
    await expectOAuthError(await tokenRequest(setup, body, basic(setup.id, setup.secret!)), 401, "invalid_client")
    const ok = await tokenRequest(setup, body, basic(setup.id, rotated.json.client_secret))
    expect(ok.status).toBe(200)
  })

  it("refuses scope escalation on refresh with invalid_scope", async () => {
    const setup = await registerClient(server)
    const { tokens } = await obtainTokens(server, setup, { scope: "services:read" })
    const response = await oauth.refreshTokenGrantRequest(setup.as, setup.client, setup.auth, tokens.refresh_token!, {
      ...insecure,
      additionalParameters: { scope: "services:read bookings:write" }
    })
    await expectOAuthError(response, 400, "invalid_scope")
  })

  it("answers garbage with RFC 6749 errors, never a 500", async () => {
    const setup = await registerClient(server)
    await expectOAuthError(await tokenRequest(setup, {}), 400, "invalid_request")
    await expectOAuthError(
      await tokenRequest(setup, { grant_type: "password", username: "a", password: "b" }, basic(setup.id, setup.secret!)),
      400,
      "unsupported_grant_type"
    )
    await expectOAuthError(
      await tokenRequest(setup, { grant_type: "refresh_token", refresh_token: "nope" }, basic(setup.id, setup.secret!)),
      400,
      "invalid_grant"
    )
  })
})

describe("refresh-token reuse", () => {
  it("lets a concurrent refresh within the grace period succeed, then treats reuse as theft and revokes the grant", async () => {
    const setup = await registerClient(server)
    const { tokens } = await obtainTokens(server, setup)
    const refresh = (token: string) => oauth.refreshTokenGrantRequest(setup.as, setup.client, setup.auth, token, insecure)
    const [first, second] = await Promise.all([refresh(tokens.refresh_token!), refresh(tokens.refresh_token!)])
    const a = await oauth.processRefreshTokenResponse(setup.as, setup.client, first)
    const b = await oauth.processRefreshTokenResponse(setup.as, setup.client, second)
    expect((await bearer(a.access_token)).status).toBe(200)
    expect((await bearer(b.access_token)).status).toBe(200)

    advance(16_000)
    await expectOAuthError(await refresh(tokens.refresh_token!), 400, "invalid_grant")
    // The whole grant is gone: every token issued under it.
    expect((await bearer(a.access_token)).status).toBe(401)
    expect((await bearer(b.access_token)).status).toBe(401)
    await expectOAuthError(await refresh(a.refresh_token!), 400, "invalid_grant")
  })
})

describe("tokens on /v1", () => {
  it("act in the client's environment only: a sandbox client's token cannot see production data", async () => {
    const created = await server.production.post("/v1/services", { name: "Live only", duration_minutes: 30 })
    expect(created.status).toBe(201)
    const setup = await registerClient(server, { environment: "sandbox" })
    const { tokens } = await obtainTokens(server, setup, { scope: "services:read" })
    expect((await bearer(tokens.access_token, `/v1/services/${created.json.id}`)).status).toBe(404)
    const list = await bearer(tokens.access_token)
    expect(list.json.data.map((s: { id: string }) => s.id)).not.toContain(created.json.id)
    const production = await registerClient(server, { environment: "production" })
    const live = await obtainTokens(server, production, { scope: "services:read" })
    expect((await bearer(live.tokens.access_token, `/v1/services/${created.json.id}`)).status).toBe(200)
  })

  it("stop working when the account revokes the grant, with its refresh token", async () => {
    const setup = await registerClient(server)
    const { tokens } = await obtainTokens(server, setup)
    const grants = await server.sandbox.get("/v1/oauth-grants")
    const grant = grants.json.data.find((g: { client_id: string }) => g.client_id === setup.id)
    expect(grant).toMatchObject({ object: "oauth_grant", user_id: server.user.id, environment: "sandbox" })
    expect([...grant.scopes].sort()).toEqual(["bookings:read", "services:read"])
    expect(grant.id).toMatch(/^grt_/)
    const revoked = await server.sandbox.del(`/v1/oauth-grants/${grant.id}`)
    expect(revoked.status).toBe(200)
    expect((await bearer(tokens.access_token)).status).toBe(401)
    const refresh = await oauth.refreshTokenGrantRequest(setup.as, setup.client, setup.auth, tokens.refresh_token!, insecure)
    await expectOAuthError(refresh, 400, "invalid_grant")
    expect((await server.sandbox.get(`/v1/oauth-grants/${grant.id}`)).status).toBe(404)
  })

  it("are rate limited on a counter of their own, not the key's", async () => {
    const setup = await registerClient(server)
    const { tokens } = await obtainTokens(server, setup)
    await server.sandbox.get("/v1/services")
    const byKey = await server.sandbox.get("/v1/services")
    const byToken = await fetch(`${server.url}/v1/services`, { headers: { authorization: `Bearer ${tokens.access_token}` } })
    expect(byToken.headers.get("x-ratelimit-limit")).toBe(byKey.headers.get("x-ratelimit-limit"))
    expect(Number(byToken.headers.get("x-ratelimit-remaining"))).toBe(Number(byToken.headers.get("x-ratelimit-limit")) - 1)
    expect(Number(byKey.headers.get("x-ratelimit-remaining"))).toBeLessThan(Number(byKey.headers.get("x-ratelimit-limit")) - 1)
  })

  it("expire after an hour", async () => {
    const setup = await registerClient(server)
    const { tokens } = await obtainTokens(server, setup)
    advance(3600_000 + 1000)
    expect((await bearer(tokens.access_token)).status).toBe(401)
  })

  it("a consent once given is remembered: the second authorization asks only to sign in", async () => {
    const setup = await registerClient(server)
    expect((await obtainTokens(server, setup)).pages).toEqual(["sign-in", "consent"])
    const again = await obtainTokens(server, setup, { agent: new UserAgent(server.url) })
    expect(again.pages).toEqual(["sign-in"])
    expect(again.tokens.access_token).toBeDefined()
    // Asking for more than was granted asks again, for the new scope only.
    const more = await authorize(server, setup, { scope: "bookings:read services:read staff:read", agent: again.agent })
    expect(more.pages).toEqual(["consent"])
  })
})
