/**
 * NUL bytes (PostgreSQL stores no 0x00 in text) in the parameters of every protocol endpoint
 * and in the sign-in form: refused with 400 before anything reaches storage, on PostgreSQL.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createTestDatabase, type TestDatabase } from "../postgres/database.js"
import { authorize, authorizeUrl, type ClientSetup, csrfOf, formAction, REDIRECT_URI, registerClient, UserAgent } from "./agent.js"
import { type OAuthTestServer, PASSWORD, startOAuthServer } from "./harness.js"

let database: TestDatabase
let server: OAuthTestServer
let setup: ClientSetup
beforeAll(async () => {
  database = await createTestDatabase()
  server = await startOAuthServer({ storage: { postgres: database.url } })
  setup = await registerClient(server)
}, 60_000)
afterAll(async () => {
  await server?.close()
  await database?.drop()
})

const basic = (id: string, secret: string) =>
  `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString("base64")}`

/** A string body is sent as UTF-8, so a "\u0000" in it is a raw 0x00 byte on the wire. */
const post = (path: string, body: string, authorization?: string) =>
  fetch(`${server.url}${path}`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded", ...(authorization !== undefined ? { authorization } : {}) },
    body
  })

const expectInvalidRequest = async (response: Response, names: string) => {
  expect(response.status).toBe(400)
  expect(response.headers.get("content-type")).toMatch(/^application\/json/)
  const body = await response.json() as { error: string; error_description: string }
  expect(body.error).toBe("invalid_request")
  expect(body.error_description).toContain(names)
}

describe("a NUL byte", () => {
  it.each(["/oauth/token", "/oauth/revoke", "/oauth/introspect"])("in a form parameter of %s: 400 invalid_request", async (path) => {
    const auth = basic(setup.client.client_id, setup.secret!)
    await expectInvalidRequest(
      await post(
        path,
        `grant_type=authorization_code&code=abc%00def&token=abc%00def&redirect_uri=${encodeURIComponent(REDIRECT_URI)}`,
        auth
      ),
      "NUL"
    )
    await expectInvalidRequest(
      await post(path, "token=abc\u0000def&code=abc\u0000def&grant_type=refresh_token&refresh_token=x\u0000", auth),
      "NUL"
    )
    await expectInvalidRequest(await post(path, `client_id=oac_x%00&token=t&grant_type=refresh_token&refresh_token=r`), "client_id")
    await expectInvalidRequest(
      await post(path, `token=t&grant_type=refresh_token&refresh_token=r`, basic(`${setup.client.client_id}\u0000`, setup.secret!)),
      "client credentials"
    )
  })

  it("in the client or redirect URI of /oauth/authorize: an error page, never a redirect", async () => {
    for (const param of ["client_id", "redirect_uri"]) {
      const { url } = await authorizeUrl(setup)
      url.searchParams.set(param, `${url.searchParams.get(param)}\u0000`)
      const response = await fetch(url, { redirect: "manual" })
      expect(response.status).toBe(400)
      expect(response.headers.get("location")).toBeNull()
      expect(response.headers.get("content-type")).toMatch(/^text\/html/)
      expect(await response.text()).toContain(`the ${param} parameter contains a NUL byte`)
    }
  })

  it("in another parameter of /oauth/authorize, by GET or POST: the error redirect to the client, with the state", async () => {
    const { url, state } = await authorizeUrl(setup)
    url.searchParams.set("scope", "services:read\u0000")
    for (
      const response of [
        await fetch(url, { redirect: "manual" }),
        await fetch(`${server.url}/oauth/authorize`, {
          method: "POST",
          redirect: "manual",
          headers: { "content-type": "application/x-www-form-urlencoded" },
          body: url.searchParams.toString()
        })
      ]
    ) {
      expect(response.status).toBe(303)
      const location = new URL(response.headers.get("location")!)
      expect(`${location.origin}${location.pathname}`).toBe(REDIRECT_URI)
      expect(location.searchParams.get("error")).toBe("invalid_request")
      expect(location.searchParams.get("error_description")).toContain("scope")
      expect(location.searchParams.get("state")).toBe(state)
    }
  })

  it("in the sign-in form: the sign-in page again with 400, and the server keeps working", async () => {
    const agent = new UserAgent(server.url)
    const { url } = await authorizeUrl(setup)
    const page = await agent.follow(await agent.request(url.href))
    const html = await page.response.text()
    for (const form of [{ email: `${server.user.email}\u0000` }, { password: `${PASSWORD}\u0000` }]) {
      const response = await agent.request(formAction(html, "Sign in"), {
        form: { csrf: csrfOf(html), email: server.user.email, password: PASSWORD, ...form }
      })
      expect(response.status).toBe(400)
      const again = await response.text()
      expect(again).toContain(`name="password"`)
      expect(again).toContain("NUL")
    }
    expect((await authorize(server, setup, { agent })).callback.searchParams.get("code")).toBeTruthy()
  })
})
