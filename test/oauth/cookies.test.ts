/**
 * The session and interaction cookies are Secure whenever the issuer is https, even when TLS
 * ends before the server (here the requests are plain http), and not with an http issuer.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { authorize, type ClientSetup, REDIRECT_URI, UserAgent } from "./agent.js"
import { type OAuthTestServer, startOAuthServer } from "./harness.js"

let https: OAuthTestServer
let http: OAuthTestServer
beforeAll(async () => {
  ;[https, http] = await Promise.all([
    startOAuthServer({ issuer: (url) => url.replace(/^http:/, "https:") }),
    startOAuthServer()
  ])
})
afterAll(() => Promise.all([https?.close(), http?.close()]))

/** A client set up without discovery: the https issuer's metadata names URLs this test does not serve. */
const setupAt = async (server: OAuthTestServer): Promise<ClientSetup> => {
  const created = await server.sandbox.post("/v1/oauth-clients", { name: "Cookie check", type: "public", redirect_uris: [REDIRECT_URI] })
  expect(created.status).toBe(201)
  return {
    as: { issuer: server.url, authorization_endpoint: `${server.url}/oauth/authorize` },
    client: { client_id: created.json.client_id },
    auth: () => {},
    redirectUri: REDIRECT_URI,
    id: created.json.id,
    secret: null
  }
}

/** Every Set-Cookie of a sign-in and consent, by cookie name. */
const cookiesOfAFlow = async (server: OAuthTestServer) => {
  const agent = new UserAgent(server.url)
  const seen: Array<string> = []
  const request = agent.request.bind(agent)
  agent.request = async (url, init) => {
    const response = await request(url, init)
    seen.push(...response.headers.getSetCookie())
    return response
  }
  const { callback } = await authorize(server, await setupAt(server), { agent })
  expect(callback.searchParams.get("code")).toBeTruthy()
  return seen
}

const names = (lines: ReadonlyArray<string>) => new Set(lines.map((line) => line.split("=", 1)[0]!.replace(/\.sig$/, "")))

describe("cookies", () => {
  it("are all Secure with an https issuer: session and interaction", async () => {
    const lines = await cookiesOfAFlow(https)
    expect(names(lines)).toEqual(new Set(["_interaction", "_interaction_resume", "_session"]))
    for (const line of lines) expect(line).toMatch(/;\s*secure/i)
  })

  it("are not Secure with an http issuer, so a local server over http keeps working", async () => {
    const lines = await cookiesOfAFlow(http)
    expect(names(lines)).toEqual(new Set(["_interaction", "_interaction_resume", "_session"]))
    for (const line of lines) expect(line).not.toMatch(/;\s*secure/i)
  })
})
