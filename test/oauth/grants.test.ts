/**
 * What ends or narrows a grant: revoking an access token ends that token only, revoking a
 * refresh token ends the whole grant; narrowing a client's scopes narrows its grants and
 * every code and token issued under them.
 */
import * as oauth from "oauth4webapi"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { authorize, type ClientSetup, insecure, obtainTokens, registerClient, UserAgent } from "./agent.js"
import { type OAuthTestServer, startOAuthServer } from "./harness.js"

let server: OAuthTestServer
beforeAll(async () => {
  server = await startOAuthServer()
})
afterAll(() => server.close())

const status = (token: string, path = "/v1/services") =>
  fetch(`${server.url}${path}`, { headers: { authorization: `Bearer ${token}` } }).then((r) => r.status)

const revoke = async (setup: ClientSetup, token: string) =>
  oauth.processRevocationResponse(await oauth.revocationRequest(setup.as, setup.client, setup.auth, token, insecure))

const refresh = (setup: ClientSetup, token: string) => oauth.refreshTokenGrantRequest(setup.as, setup.client, setup.auth, token, insecure)

const grantOf = async (setup: ClientSetup) => {
  const list = await server.sandbox.get("/v1/oauth-grants")
  return list.json.data.find((g: { client_id: string }) => g.client_id === setup.id) as { id: string; scopes: Array<string> } | undefined
}

describe("POST /oauth/revoke", () => {
  it("on an access token ends that token only: the refresh token works, the grant stays, consent is remembered", async () => {
    const setup = await registerClient(server)
    const { tokens } = await obtainTokens(server, setup)
    await revoke(setup, tokens.access_token)
    expect(await status(tokens.access_token)).toBe(401)

    const refreshed = await oauth.processRefreshTokenResponse(setup.as, setup.client, await refresh(setup, tokens.refresh_token!))
    expect(await status(refreshed.access_token)).toBe(200)
    expect(await grantOf(setup)).toBeDefined()
    expect((await obtainTokens(server, setup, { agent: new UserAgent(server.url) })).pages).toEqual(["sign-in"])
  })

  it("on a refresh token ends the whole grant: every token stops, the grant leaves the list, consent is asked again", async () => {
    const setup = await registerClient(server)
    const { tokens } = await obtainTokens(server, setup)
    const second = await oauth.processRefreshTokenResponse(setup.as, setup.client, await refresh(setup, tokens.refresh_token!))
    await revoke(setup, second.refresh_token!)

    expect(await status(tokens.access_token)).toBe(401)
    expect(await status(second.access_token)).toBe(401)
    const after = await refresh(setup, second.refresh_token!)
    expect(after.status).toBe(400)
    expect(((await after.json()) as { error: string }).error).toBe("invalid_grant")
    expect(await grantOf(setup)).toBeUndefined()
    expect((await authorize(server, setup, { agent: new UserAgent(server.url) })).pages).toEqual(["sign-in", "consent"])
  })
})

describe("PATCH /v1/oauth-clients/{id} with fewer scopes", () => {
  it("narrows the client's grants and the scopes its existing codes, access and refresh tokens carry", async () => {
    const setup = await registerClient(server, { scopes: ["bookings:read", "services:read", "staff:read"] })
    const scope = "bookings:read services:read staff:read"
    const { tokens } = await obtainTokens(server, setup, { scope })
    const pending = await authorize(server, setup, { scope })
    expect(await status(tokens.access_token, "/v1/staff")).toBe(200)

    const patched = await server.sandbox.patch(`/v1/oauth-clients/${setup.id}`, { scopes: ["services:read"] })
    expect(patched.status).toBe(200)
    expect((await grantOf(setup))?.scopes).toEqual(["services:read"])

    // The access token issued before: only what the client keeps.
    expect(await status(tokens.access_token, "/v1/staff")).toBe(403)
    expect(await status(tokens.access_token, "/v1/bookings")).toBe(403)
    expect(await status(tokens.access_token)).toBe(200)
    const introspected = await oauth.processIntrospectionResponse(
      setup.as,
      setup.client,
      await oauth.introspectionRequest(setup.as, setup.client, setup.auth, tokens.access_token, insecure)
    )
    expect(introspected.scope).toBe("services:read")

    // The refresh token issued before: new tokens with the narrowed scopes.
    const refreshed = await oauth.processRefreshTokenResponse(setup.as, setup.client, await refresh(setup, tokens.refresh_token!))
    expect(refreshed.scope).toBe("services:read")
    expect(await status(refreshed.access_token, "/v1/staff")).toBe(403)

    // The code issued before: exchanged for the narrowed scopes.
    const params = oauth.validateAuthResponse(setup.as, setup.client, pending.callback, pending.state)
    const exchanged = await oauth.processAuthorizationCodeResponse(
      setup.as,
      setup.client,
      await oauth.authorizationCodeGrantRequest(setup.as, setup.client, setup.auth, params, setup.redirectUri, pending.verifier, insecure)
    )
    expect(exchanged.scope).toBe("services:read")
    expect(await status(exchanged.access_token, "/v1/staff")).toBe(403)
  })
})
