/** The whole authorization code flow driven by oauth4webapi as an outside client. */
import * as oauth from "oauth4webapi"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { expectProblem } from "../http/harness.js"
import { authorize, discover, insecure, obtainTokens, registerClient } from "./agent.js"
import { type OAuthTestServer, startOAuthServer } from "./harness.js"

let server: OAuthTestServer
beforeAll(async () => {
  server = await startOAuthServer()
})
afterAll(() => server.close())

describe("discovery", () => {
  it("serves RFC 8414 metadata naming the endpoints, scopes and PKCE S256", async () => {
    const as = await discover(server.url)
    expect(as.issuer).toBe(server.url)
    expect(as.authorization_endpoint).toBe(`${server.url}/oauth/authorize`)
    expect(as.token_endpoint).toBe(`${server.url}/oauth/token`)
    expect(as.revocation_endpoint).toBe(`${server.url}/oauth/revoke`)
    expect(as.introspection_endpoint).toBe(`${server.url}/oauth/introspect`)
    expect(as.code_challenge_methods_supported).toEqual(["S256"])
    expect(as.response_types_supported).toEqual(["code"])
    expect(as.grant_types_supported).toEqual(["authorization_code", "refresh_token"])
    expect(as.scopes_supported).toContain("bookings:read")
    expect(as.scopes_supported).not.toContain("openid")
  })
})

describe("confidential client", () => {
  it("gets tokens, calls /v1 with them, refreshes with rotation, introspects and revokes", async () => {
    const setup = await registerClient(server)
    expect(setup.secret).toMatch(/^ocs_/)
    const { tokens } = await obtainTokens(server, setup)
    expect(tokens.token_type.toLowerCase()).toBe("bearer")
    expect(tokens.expires_in).toBe(3600)
    expect(tokens.scope?.split(" ").sort()).toEqual(["bookings:read", "services:read"])
    expect(tokens.refresh_token).toBeDefined()

    const list = await fetch(`${server.url}/v1/services`, { headers: { authorization: `Bearer ${tokens.access_token}` } })
    expect(list.status).toBe(200)
    expect(list.headers.get("x-ratelimit-limit")).toBe("3000")
    const denied = await fetch(`${server.url}/v1/services`, {
      method: "POST",
      headers: { authorization: `Bearer ${tokens.access_token}`, "content-type": "application/json" },
      body: JSON.stringify({ name: "Cut", duration_minutes: 30 })
    })
    expect(denied.status).toBe(403)

    const refreshed = await oauth.processRefreshTokenResponse(
      setup.as,
      setup.client,
      await oauth.refreshTokenGrantRequest(setup.as, setup.client, setup.auth, tokens.refresh_token!, insecure)
    )
    expect(refreshed.refresh_token).not.toBe(tokens.refresh_token)
    expect(refreshed.access_token).not.toBe(tokens.access_token)

    const introspected = await oauth.processIntrospectionResponse(
      setup.as,
      setup.client,
      await oauth.introspectionRequest(setup.as, setup.client, setup.auth, refreshed.access_token, insecure)
    )
    expect(introspected.active).toBe(true)
    expect(introspected.scope?.split(" ").sort()).toEqual(["bookings:read", "services:read"])
    expect(introspected.client_id).toBe(setup.id)

    await oauth.processRevocationResponse(
      await oauth.revocationRequest(setup.as, setup.client, setup.auth, refreshed.access_token, insecure)
    )
    const after = await fetch(`${server.url}/v1/services`, { headers: { authorization: `Bearer ${refreshed.access_token}` } })
    expect(after.status).toBe(401)
    const gone = await oauth.processIntrospectionResponse(
      setup.as,
      setup.client,
      await oauth.introspectionRequest(setup.as, setup.client, setup.auth, refreshed.access_token, insecure)
    )
    expect(gone.active).toBe(false)
  })
})

describe("public client", () => {
  it("exchanges a code with PKCE alone and refreshes", async () => {
    const setup = await registerClient(server, { type: "public" })
    expect(setup.secret).toBeNull()
    const { tokens } = await obtainTokens(server, setup, { scope: "services:read" })
    const reply = await fetch(`${server.url}/v1/services`, { headers: { authorization: `Bearer ${tokens.access_token}` } })
    expect(reply.status).toBe(200)
    const refreshed = await oauth.processRefreshTokenResponse(
      setup.as,
      setup.client,
      await oauth.refreshTokenGrantRequest(setup.as, setup.client, setup.auth, tokens.refresh_token!, insecure)
    )
    expect(refreshed.access_token).toBeDefined()
  })
})

describe("deny", () => {
  it("Deny sends error=access_denied with the state", async () => {
    const setup = await registerClient(server)
    const { callback, state } = await authorize(server, setup, { decision: "deny" })
    expect(callback.searchParams.get("error")).toBe("access_denied")
    expect(callback.searchParams.get("state")).toBe(state)
    expect(callback.searchParams.get("code")).toBeNull()
  })
})

void expectProblem
