/**
 * The account boundary: a grant joins a user and a client of one account. A user signed in
 * through one account's client is asked to sign in again at another account's client, and
 * every grant step (consent, code exchange, refresh, an access token on /v1, saving a grant)
 * refuses a user of another account, even when stored records have been made to join them.
 */
import { Effect, Option } from "effect"
import * as oauth from "oauth4webapi"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { SYSTEM_TENANT } from "../../src/auth/collections.js"
import { ProviderRecordsCollection, recordKey, OAuthGrantsCollection } from "../../src/oauth/collections.js"
import { OAuthGrants } from "../../src/oauth/OAuthGrants.js"
import { Storage } from "../../src/ports/storage.js"
import { Tenant } from "../../src/ports/tenant.js"
import {
  authorize,
  authorizeUrl,
  type ClientSetup,
  csrfOf,
  insecure,
  obtainTokens,
  type OAuthSite,
  registerClient,
  UserAgent
} from "./agent.js"
import { type OAuthTestAccount, type OAuthTestServer, startOAuthServer } from "./harness.js"

let server: OAuthTestServer
let harbor: OAuthTestAccount
let harborSite: OAuthSite
beforeAll(async () => {
  server = await startOAuthServer()
  harbor = await server.addAccount("Harbor", "harbor@example.com")
  harborSite = { url: server.url, sandbox: harbor.sandbox, production: harbor.production, user: harbor.user }
})
afterAll(() => server.close())

const bearer = (token: string) => fetch(`${server.url}/v1/services`, { headers: { authorization: `Bearer ${token}` } })

/** Rewrites a stored record of the authorization server, as a bug or a tampered database could. */
const rewriteRecord = (model: string, id: string, change: (payload: Record<string, unknown>) => Record<string, unknown>) =>
  server.run(Effect.provideService(
    Effect.gen(function*() {
      const records = (yield* Storage).collection(ProviderRecordsCollection)
      const record = Option.getOrThrow(yield* records.get(yield* recordKey(model, id)))
      yield* records.update({ ...record, payload: change({ ...record.payload }) })
    }),
    Tenant,
    SYSTEM_TENANT
  ))

/** Makes a grant of Harbor's client name the Studio account's user, in every record that says who it is. */
const joinAccounts = async (grantId: string) => {
  await rewriteRecord("Grant", grantId, (p) => ({ ...p, accountId: server.user.id }))
  await server.run(Effect.provideService(
    Effect.gen(function*() {
      const grants = (yield* Storage).collection(OAuthGrantsCollection)
      const grant = Option.getOrThrow(yield* grants.get(grantId))
      yield* grants.update({ ...grant, user_id: server.user.id })
    }),
    Tenant,
    { account_id: harbor.account.account.id, environment: "sandbox" }
  ))
}

const harborGrantOf = async (setup: ClientSetup) => {
  const list = await harbor.sandbox.get("/v1/oauth-grants")
  return list.json.data.find((g: { client_id: string }) => g.client_id === setup.id) as { id: string; user_id: string } | undefined
}

describe("a user signed in through another account's client", () => {
  it("is asked to sign in again, and the grant names the client's account's user", async () => {
    const studioClient = await registerClient(server)
    const harborClient = await registerClient(harborSite)
    const agent = new UserAgent(server.url)
    expect((await obtainTokens(server, studioClient, { agent })).pages).toEqual(["sign-in", "consent"])

    // The same browser at Harbor's client: a sign-in page, where Studio's user is unknown.
    const refused = await authorize(server, harborClient, { agent, email: server.user.email }).catch((e: Error) => e)
    expect(String(refused)).toContain("page 401")
    expect(await harborGrantOf(harborClient)).toBeUndefined()

    const { tokens, pages } = await obtainTokens(harborSite, harborClient, { agent })
    expect(pages).toEqual(["sign-in", "consent"])
    expect((await harborGrantOf(harborClient))?.user_id).toBe(harbor.user.id)
    expect((await bearer(tokens.access_token)).status).toBe(200)
  })

  it("cannot consent: posting to the consent form answers with the sign-in page", async () => {
    const studioClient = await registerClient(server)
    const harborClient = await registerClient(harborSite)
    const agent = new UserAgent(server.url)
    await obtainTokens(server, studioClient, { agent })
    const { url } = await authorizeUrl(harborClient)
    const step = await agent.follow(await agent.request(url.href))
    expect(step.external).toBeUndefined()
    const html = await step.response.text()
    expect(html).toContain(`name="password"`)
    const confirm = `${new URL(step.response.url).pathname}/confirm`
    const posted = await agent.request(confirm, { form: { csrf: csrfOf(html) } })
    expect(posted.status).toBe(200)
    expect(posted.headers.get("location")).toBeNull()
    expect(await posted.text()).toContain(`name="password"`)
    expect(await harborGrantOf(harborClient)).toBeUndefined()
  })
})

describe("a grant whose records join two accounts", () => {
  it("its code is refused at the token endpoint", async () => {
    const setup = await registerClient(harborSite)
    const { callback, state, verifier } = await authorize(harborSite, setup)
    const params = oauth.validateAuthResponse(setup.as, setup.client, callback, state)
    const code = params.get("code")!
    await rewriteRecord("AuthorizationCode", code, (p) => ({ ...p, accountId: server.user.id }))
    await joinAccounts((await harborGrantOf(setup))!.id)
    const response = await oauth.authorizationCodeGrantRequest(
      setup.as,
      setup.client,
      setup.auth,
      params,
      setup.redirectUri,
      verifier,
      insecure
    )
    expect(response.status).toBe(400)
    expect(((await response.json()) as { error: string }).error).toBe("invalid_grant")
  })

  it("its refresh token is refused", async () => {
    const setup = await registerClient(harborSite)
    const { tokens } = await obtainTokens(harborSite, setup)
    await rewriteRecord("RefreshToken", tokens.refresh_token!, (p) => ({ ...p, accountId: server.user.id }))
    await joinAccounts((await harborGrantOf(setup))!.id)
    const response = await oauth.refreshTokenGrantRequest(setup.as, setup.client, setup.auth, tokens.refresh_token!, insecure)
    expect(response.status).toBe(400)
    expect(((await response.json()) as { error: string }).error).toBe("invalid_grant")
  })

  it("its access token is refused on /v1", async () => {
    const setup = await registerClient(harborSite)
    const { tokens } = await obtainTokens(harborSite, setup)
    expect((await bearer(tokens.access_token)).status).toBe(200)
    await rewriteRecord("AccessToken", tokens.access_token, (p) => ({ ...p, accountId: server.user.id }))
    await joinAccounts((await harborGrantOf(setup))!.id)
    expect((await bearer(tokens.access_token)).status).toBe(401)
  })

  it("an access token whose grant is gone from the account's list is refused on /v1", async () => {
    const setup = await registerClient(harborSite)
    const { tokens } = await obtainTokens(harborSite, setup)
    const grant = (await harborGrantOf(setup))!
    await server.run(Effect.provideService(
      Effect.flatMap(Storage, (storage) => storage.collection(OAuthGrantsCollection).remove(grant.id)),
      Tenant,
      { account_id: harbor.account.account.id, environment: "sandbox" }
    ))
    expect((await bearer(tokens.access_token)).status).toBe(401)
  })

  it("cannot be saved", async () => {
    const setup = await registerClient(harborSite)
    const saved = await server.run(
      Effect.either(
        Effect.flatMap(
          OAuthGrants,
          (grants) =>
            grants.save({ id: "grt_01JZZZZZZZZZZZZZZZZZZZZZZZ", client_id: setup.id, user_id: server.user.id, scopes: ["services:read"] })
        )
      )
    )
    expect(saved._tag).toBe("Left")
    expect(await harborGrantOf(setup)).toBeUndefined()
  })
})
