/**
 * NUL characters (U+0000) at the authorization server: a sign-in with one in the email and an
 * authorization request with one in client_id are refused like any unknown user or client,
 * on PostgreSQL too (which cannot hold the character), never a 500.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createTestDatabase, type TestDatabase } from "../postgres/database.js"
import { authorize, registerClient, REDIRECT_URI } from "./agent.js"
import { type OAuthTestServer, startOAuthServer } from "./harness.js"

describe.each(["memory", "PostgreSQL"] as const)("NUL characters at the authorization server on %s storage", (storage) => {
  let database: TestDatabase | undefined
  let server: OAuthTestServer
  beforeAll(async () => {
    if (storage === "PostgreSQL") database = await createTestDatabase()
    server = await startOAuthServer(database === undefined ? {} : { storage: { postgres: database.url } })
  }, 60_000)
  afterAll(async () => {
    await server?.close()
    await database?.drop()
  })

  it("a sign-in whose email holds a NUL is a wrong sign-in (401 page), not a fault", async () => {
    const setup = await registerClient(server)
    await expect(authorize(server, setup, { email: `${server.user.email}\u0000` })).rejects.toThrow(/^page 401:/)
    // The real user still signs in.
    expect((await authorize(server, setup)).pages).toEqual(["sign-in", "consent"])
  })

  it("an authorization request whose client_id holds a NUL is a 400 error page, never a redirect", async () => {
    const setup = await registerClient(server)
    const url = new URL("/oauth/authorize", server.url)
    url.search = new URLSearchParams({
      client_id: `${setup.id}\u0000`,
      response_type: "code",
      redirect_uri: REDIRECT_URI,
      code_challenge: "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
      code_challenge_method: "S256"
    }).toString()
    const reply = await fetch(url, { redirect: "manual" })
    expect(reply.status).toBe(400)
    expect(reply.headers.get("location")).toBeNull()
  })
})
