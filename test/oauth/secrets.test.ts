/**
 * No secret in any OAuth error path: `slotwise serve` on PostgreSQL (whose errors are the
 * likeliest to carry a value) is sent client secrets, codes, access and refresh tokens and
 * passwords in every malformed way; none of them appears in a response (every header and
 * body) or in the server's stdout or stderr, and none of those requests fails with a 5xx.
 */
import { type ChildProcess, spawn } from "node:child_process"
import * as path from "node:path"
import * as readline from "node:readline"
import { fileURLToPath } from "node:url"
import * as oauth from "oauth4webapi"
import { afterAll, describe, expect, it } from "vitest"
import { binary, client } from "../http/harness.js"
import { createTestDatabase, type TestDatabase } from "../postgres/database.js"
import { authorize, authorizeUrl, csrfOf, formAction, insecure, obtainTokens, type OAuthSite, registerClient, UserAgent } from "./agent.js"
import { PASSWORD } from "./harness.js"

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..")
const children: Array<ChildProcess> = []
let database: TestDatabase | undefined
afterAll(async () => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill("SIGKILL")
  await database?.drop()
})

/** `slotwise serve` on a new PostgreSQL database, with its whole stdout and stderr kept. */
const serve = async () => {
  const entry = await binary()
  database = await createTestDatabase()
  const child = spawn(process.execPath, [entry, "serve", "--port", "0", "--database", database.url, "--admin-token", "admin-secret"], {
    cwd: root,
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, SLOTWISE_ADMIN_TOKEN: "", SLOTWISE_PUBLIC_URL: "" }
  })
  children.push(child)
  const output: Array<string> = []
  child.stderr!.on("data", (d) => output.push(String(d)))
  const exited = new Promise<void>((resolve) => child.on("close", () => resolve()))
  const started = await new Promise<{ url: string; key: string; accountId: string }>((resolve, reject) => {
    let key: string | undefined
    let accountId: string | undefined
    child.on("exit", (code) => reject(new Error(`server exited (${code}) before listening: ${output.join("")}`)))
    readline.createInterface({ input: child.stdout! }).on("line", (line) => {
      output.push(line)
      accountId ??= /Created account (acc_\w+)/.exec(line)?.[1]
      key ??= /sandbox secret key\s+(sk_test_\w+)/.exec(line)?.[1]
      const listening = /^listening on (http:\/\/\S+)$/.exec(line)
      if (listening && key !== undefined && accountId !== undefined) resolve({ url: listening[1]!, key, accountId })
    })
  })
  return {
    ...started,
    /** Stops the server and gives everything it wrote. */
    stop: async () => {
      child.kill("SIGTERM")
      await exited
      return output.join("\n")
    }
  }
}

const basic = (id: string, secret: string) => `Basic ${Buffer.from(`${id}:${secret}`).toString("base64")}`

describe("OAuth error paths", () => {
  it("never show or log a client secret, code, token or password", async () => {
    const server = await serve()
    const admin = client(server.url, "admin-secret")
    const email = "olive@example.com"
    expect(
      (await admin.post(`/admin/v1/accounts/${server.accountId}/users`, { email, name: "Olive", password: PASSWORD, role: "owner" })).status
    ).toBe(201)
    const site: OAuthSite = {
      url: server.url,
      sandbox: client(server.url, server.key),
      production: client(server.url, server.key),
      user: { email }
    }
    const setup = await registerClient(site)
    const other = await registerClient(site, { type: "public" })
    const secret = setup.secret!
    const { tokens, params: usedCode, verifier } = await obtainTokens(site, setup)
    const pending = await authorize(site, setup)
    const code = pending.callback.searchParams.get("code")!
    const access = tokens.access_token
    const refresh = tokens.refresh_token!
    const wrongSecret = `${secret.slice(0, -2)}zz`
    const secrets = { secret, wrongSecret, code, usedCode: usedCode.get("code")!, access, refresh, password: PASSWORD, verifier }

    const replies: Array<Response> = []
    const send = async (url: string, init: RequestInit = {}) => {
      replies.push(await fetch(new URL(url, server.url), { redirect: "manual", ...init }))
    }
    const form = (body: Record<string, string>, authorization?: string, query = "") => ({
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded", ...(authorization !== undefined ? { authorization } : {}) },
      body: new URLSearchParams(body).toString(),
      query
    })
    const endpoints = ["/oauth/token", "/oauth/revoke", "/oauth/introspect"]
    const id = setup.client.client_id
    for (const endpoint of endpoints) {
      const cases: Array<{ body: Record<string, string>; authorization?: string; query?: string }> = [
        {
          body: { grant_type: "authorization_code", code, redirect_uri: setup.redirectUri, code_verifier: verifier, token: access },
          authorization: basic(id, wrongSecret)
        },
        {
          body: { grant_type: "authorization_code", code: usedCode.get("code")!, redirect_uri: setup.redirectUri, code_verifier: verifier },
          authorization: basic(id, secret)
        },
        {
          body: { grant_type: "authorization_code", code, redirect_uri: setup.redirectUri, code_verifier: "x".repeat(43) },
          authorization: basic(id, secret)
        },
        {
          body: { grant_type: "refresh_token", refresh_token: access, token: refresh },
          authorization: basic(other.client.client_id, secret)
        },
        {
          body: { grant_type: "refresh_token", refresh_token: `${refresh}\u0000`, token: `${access}\u0000` },
          authorization: basic(id, secret)
        },
        { body: { grant_type: "refresh_token", refresh_token: code, client_id: id, client_secret: secret, token: code } },
        { body: { grant_type: "password", username: email, password: PASSWORD, client_id: id } },
        { body: { client_id: secret, token: refresh } },
        { body: { grant_type: "refresh_token", refresh_token: refresh }, authorization: `Basic ${Buffer.from(secret).toString("base64")}` },
        { body: { grant_type: "refresh_token", refresh_token: refresh }, authorization: basic(id, `${secret}%zz`) },
        { body: { grant_type: "refresh_token", refresh_token: refresh }, authorization: `Bearer ${access}` },
        { body: {}, query: `?client_secret=${secret}&code=${code}&refresh_token=${refresh}&token=${access}` },
        {
          body: { grant_type: "refresh_token", refresh_token: refresh, code, token: access },
          authorization: basic(id, secret),
          query: `?code=${code}`
        }
      ]
      for (const c of cases) {
        const { query, ...init } = form(c.body, c.authorization, c.query)
        await send(`${endpoint}${query}`, init)
      }
      await send(endpoint, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ client_secret: secret, code, token: access, refresh_token: refresh })
      })
      await send(`${endpoint}?token=${access}`)
    }

    // The authorization endpoint with secrets where parameters go, and the sign-in form.
    const { url } = await authorizeUrl(setup)
    for (
      const [name, value] of [["client_id", secret], ["code_challenge", access], ["scope", refresh], ["password", PASSWORD], [
        "response_mode",
        code
      ]] as const
    ) {
      const bad = new URL(url)
      bad.searchParams.set(name, value)
      await send(bad.href)
    }
    const agent = new UserAgent(server.url)
    const page = await agent.follow(await agent.request(url.href))
    const html = await page.response.text()
    for (
      const fields of [{ password: `${PASSWORD}!` }, { password: `${PASSWORD}\u0000` }, { email: "nobody@example.com" }, {
        email: `${email}\u0000`
      }]
    ) {
      replies.push(await agent.request(formAction(html, "Sign in"), { form: { csrf: csrfOf(html), email, password: PASSWORD, ...fields } }))
    }
    replies.push(await agent.request(formAction(html, "Sign in"), { form: { csrf: secret, email, password: PASSWORD } }))

    // /v1 with the wrong kinds of token.
    for (const token of [refresh, code, `${access}x`, secret, PASSWORD]) {
      await send("/v1/services", { headers: { authorization: `Bearer ${token}` } })
    }
    // Revoked tokens used again.
    await oauth.processRevocationResponse(await oauth.revocationRequest(setup.as, setup.client, setup.auth, refresh, insecure))
    await send("/v1/services", { headers: { authorization: `Bearer ${access}` } })
    const { query: _q, ...reuse } = form({ grant_type: "refresh_token", refresh_token: refresh }, basic(id, secret))
    await send("/oauth/token", reuse)

    const texts = await Promise.all(replies.map(async (r) => {
      const headers: Array<string> = []
      r.headers.forEach((value, name) => headers.push(`${name}: ${value}`))
      return `${headers.join("\n")}\n\n${await r.text()}`
    }))
    expect(replies.length).toBeGreaterThan(60)
    const logs = await server.stop()
    for (const [name, value] of Object.entries(secrets)) {
      const found = texts.findIndex((text) => text.includes(value))
      expect(found === -1 ? "nowhere" : texts[found], `${name} in a response`).toBe("nowhere")
      expect(logs.includes(value) ? logs : "nowhere", `${name} in the server's output`).toBe("nowhere")
    }
    expect(replies.filter((r) => r.status >= 500).map((r) => `${r.status} ${r.url}`)).toEqual([])
  }, 120_000)
})
