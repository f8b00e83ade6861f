/**
 * The mounted Node handler with `oauth`: the authorization server under the mount prefix,
 * beside the API, in a host's node:http server; the whole flow through it.
 */
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createHttpHandler, type SlotwiseHttpHandler } from "../../index.js"
import { client, expectProblem, expectStatus } from "../http/harness.js"
import { discover, obtainTokens, type OAuthSite, registerClient } from "./agent.js"
import { ADMIN_TOKEN, PASSWORD } from "./harness.js"

let slotwise: SlotwiseHttpHandler | undefined
let server: http.Server
let host = ""

beforeAll(async () => {
  server = http.createServer((req, res) => {
    if (slotwise !== undefined && /^\/(scheduling|\.well-known)(\/|$)/.test(req.url ?? "")) return slotwise.node(req, res)
    res.writeHead(200, { "content-type": "text/plain" }).end("host")
  })
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r))
  host = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  slotwise = await createHttpHandler({ prefix: "/scheduling", adminToken: ADMIN_TOKEN, oauth: { issuer: `${host}/scheduling` } })
})
afterAll(async () => {
  server.closeAllConnections()
  await new Promise((r) => server.close(r))
  await slotwise?.close()
})

describe("mounted handler with oauth", () => {
  it("serves the authorization server under the prefix: RFC 8414 metadata, sign-in, consent, tokens, /v1 with them", async () => {
    const base = `${host}/scheduling`
    const account = await slotwise!.createAccount({ name: "Mounted", plan: "pro" })
    expectStatus(
      await client(base, ADMIN_TOKEN).post(`/admin/v1/accounts/${account.account.id}/users`, {
        email: "olive@example.com",
        name: "Olive",
        password: PASSWORD,
        role: "owner"
      }),
      201
    )
    const key = client(base, account.keys.sandbox.secret)
    const site: OAuthSite = { url: base, sandbox: key, production: key, user: { email: "olive@example.com" } }

    // oauth4webapi looks for an issuer with a path at /.well-known/oauth-authorization-server/scheduling.
    const as = await discover(base)
    expect(as.issuer).toBe(base)
    expect(as.authorization_endpoint).toBe(`${base}/oauth/authorize`)
    const inside = await fetch(`${base}/.well-known/oauth-authorization-server`)
    expect(((await inside.json()) as { issuer: string }).issuer).toBe(base)

    const setup = await registerClient(site)
    const { tokens, pages, headers } = await obtainTokens(site, setup)
    expect(pages).toEqual(["sign-in", "consent"])
    for (const page of headers) expect(page.get("x-frame-options")).toBe("DENY")
    expect((await fetch(`${base}/v1/services`, { headers: { authorization: `Bearer ${tokens.access_token}` } })).status).toBe(200)
    // Nothing of it leaks outside the prefix.
    expect(await (await fetch(`${host}/oauth/token`, { method: "POST" })).text()).toBe("host")
  })

  it("the API under the prefix is unchanged; the Fetch handler does not serve OAuth", async () => {
    expectProblem(await client(`${host}/scheduling`).get("/v1/services"), 401, "unauthorized")
    expectProblem(await client(`${host}/scheduling`).get("/oauthx"), 404, "not_found")
    const viaFetch = await slotwise!.fetch(new Request(`${host}/scheduling/oauth/token`, { method: "POST" }))
    expect(viaFetch.status).toBe(404)
  })

  it("refuses an issuer that does not end with the prefix", async () => {
    await expect(createHttpHandler({ prefix: "/scheduling", oauth: { issuer: "https://app.example.com" } })).rejects.toThrow(
      /oauth\.issuer must end with the mount prefix/
    )
    await expect(createHttpHandler({ oauth: { issuer: "https://app.example.com/x" } })).rejects.toThrow(/mount prefix/)
    await expect(createHttpHandler({ oauth: { issuer: "ftp://app.example.com" } })).rejects.toThrow(/http\(s\) URL/)
  })
})

describe("mounted handler without a prefix", () => {
  it("serves /oauth and the metadata at the root", async () => {
    const plain = await createHttpHandler({ oauth: { issuer: "https://app.example.com" } })
    try {
      const target = http.createServer(plain.node)
      await new Promise<void>((r) => target.listen(0, "127.0.0.1", r))
      const url = `http://127.0.0.1:${(target.address() as AddressInfo).port}`
      const metadata = (await (await fetch(`${url}/.well-known/oauth-authorization-server`)).json()) as { issuer: string }
      expect(metadata.issuer).toBe("https://app.example.com")
      const token = await fetch(`${url}/oauth/token`, {
        method: "POST",
        body: new URLSearchParams({ grant_type: "refresh_token", refresh_token: "x" })
      })
      expect(token.status).toBe(400)
      expect(((await token.json()) as { error: string }).error).toBe("invalid_request")
      target.closeAllConnections()
      await new Promise((r) => target.close(r))
    } finally {
      await plain.close()
    }
  })
})
