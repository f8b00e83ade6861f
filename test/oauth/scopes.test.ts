/**
 * Every /v1 endpoint refuses an OAuth token that lacks its scope. The table is read from the
 * endpoints' own access annotations (adapters/http/contract/access.ts), so a new endpoint is
 * covered the day it is added.
 */
import { HttpApi } from "@effect/platform"
import { Context } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { SlotwiseApi } from "../../adapters/http/api.js"
import { Access, type AccessRule, requiredScopes } from "../../adapters/http/contract/access.js"
import { SCOPES } from "../../src/keys/apiKey.js"
import { obtainTokens, registerClient } from "./agent.js"
import { type OAuthTestServer, startOAuthServer } from "./harness.js"

interface Endpoint {
  readonly method: string
  readonly path: string
  readonly rule: AccessRule
}

const endpoints: Array<Endpoint> = []
HttpApi.reflect(SlotwiseApi, {
  onGroup: () => {},
  onEndpoint: ({ endpoint, mergedAnnotations }) => {
    const rule = Context.getOrElse(mergedAnnotations, Access, () => ({ auth: "none" }) as AccessRule)
    endpoints.push({ method: endpoint.method, path: endpoint.path.replace(/:(\w+)/g, "x_$1"), rule })
  }
})
const scoped = endpoints.filter((e) => requiredScopes(e.rule).length > 0)

let server: OAuthTestServer
const tokens = new Map<string, string>()
beforeAll(async () => {
  server = await startOAuthServer()
  const setup = await registerClient(server)
  // One token per scope, holding every scope but that one; and one holding them all.
  for (const missing of [...SCOPES, "none"]) {
    const scope = SCOPES.filter((s) => s !== missing).join(" ")
    tokens.set(missing, (await obtainTokens(server, setup, { scope })).tokens.access_token)
  }
}, 120_000)
afterAll(() => server.close())

const call = (endpoint: Endpoint, token: string) =>
  fetch(`${server.url}${endpoint.path}`, {
    method: endpoint.method,
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    ...(endpoint.method === "GET" || endpoint.method === "DELETE" ? {} : { body: "{}" })
  }).then(async (r) => ({ status: r.status, body: await r.json().catch(() => undefined) }))

describe("scopes on every /v1 endpoint", () => {
  it("the table is not empty and covers every scope", () => {
    expect(scoped.length).toBeGreaterThan(40)
    expect(new Set(scoped.flatMap((e) => requiredScopes(e.rule)))).toEqual(new Set(SCOPES))
  })

  it.each(scoped.map((e) => [`${e.method} ${e.path}`, e] as const))("%s refuses a token without its scope", async (_, endpoint) => {
    for (const scope of requiredScopes(endpoint.rule)) {
      const reply = await call(endpoint, tokens.get(scope)!)
      expect({ status: reply.status, code: reply.body?.code }).toEqual({ status: 403, code: "forbidden" })
    }
  })

  it.each(scoped.filter((e) => e.method === "GET").map((e) => [`${e.method} ${e.path}`, e] as const))(
    "%s lets a token with its scope through",
    async (_, endpoint) => {
      const reply = await call(endpoint, tokens.get("none")!)
      expect(reply.status).not.toBe(403)
      expect(reply.status).not.toBe(401)
    }
  )
})
