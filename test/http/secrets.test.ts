/**
 * No response and no line the server prints ever repeats a secret: every kind of credential
 * (secret and publishable keys of both environments, the operator's token, a webhook signing
 * secret, an OAuth access token, an account user's password, a calendar feed's URL token) sent in every malformed way and
 * every wrong place, against the bundled binary, with every reply's status line, headers and
 * body, the event feed and the process's stdout and stderr searched for the secret or any
 * 8 characters of it.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { obtainTokens, registerClient } from "../oauth/agent.js"
import { PASSWORD } from "../oauth/harness.js"
import { binary, client, type Client, expectStatus, killServers, type Reply, request, type ServerProcess, serveProcess } from "./harness.js"

const ADMIN = "operator-token-Qm7Zt2Vw9Kx4Lp8R"

interface Secret {
  readonly kind: string
  readonly value: string
  /** The part that is not a fixed prefix: no 8 characters of it may be repeated. */
  readonly random: string
}

const secret = (kind: string, value: string, prefix = /^(sk|pk)_(test|live)_|^whsec_/): Secret => ({
  kind,
  value,
  random: value.replace(prefix, "")
})

/** Every run of 8 characters of the secret's random part. */
const windowsOf = (s: Secret): Array<string> => Array.from({ length: Math.max(0, s.random.length - 7) }, (_, i) => s.random.slice(i, i + 8))

const leaksIn = (text: string, secrets: ReadonlyArray<Secret>): Array<string> =>
  secrets.flatMap((s) => windowsOf(s).some((w) => text.includes(w)) ? [s.kind] : [])

const replyText = (reply: Reply): string => {
  const headers: Array<string> = []
  reply.headers.forEach((value, name) => headers.push(`${name}: ${value}`))
  return `${reply.status}\n${headers.join("\n")}\n\n${reply.text}`
}

/** A client address of its own for each request (`--trust-proxy`): no attempt meets the per-address limit. */
let addresses = 0
const nextAddress = () => `10.${(++addresses >> 16) & 255}.${(addresses >> 8) & 255}.${addresses & 255}`

let server: ServerProcess
let stderr = ""
let carrier: Client
let production: Client
let secrets: Array<Secret> = []

beforeAll(async () => {
  await binary()
  server = await serveProcess(["--memory", "--admin-token", ADMIN, "--trust-proxy"])
  server.process.stderr!.on("data", (d) => (stderr += String(d)))
  const admin = client(server.url, ADMIN)
  const account = expectStatus(
    await admin.post("/admin/v1/accounts", { name: "Leaks", plan: "business", allowed_origins: ["https://shop.example.com"] }),
    201
  )
  const keys = account.keys
  carrier = client(server.url, keys.sandbox.secret)
  production = client(server.url, keys.production.secret)
  const webhook = expectStatus(await carrier.post("/v1/webhooks", { url: "https://hooks.example.com/in", events: ["*"] }), 201)
  expectStatus(
    await admin.post(`/admin/v1/accounts/${account.account.id}/users`, {
      email: "owner@example.com",
      name: "Olive",
      password: PASSWORD,
      role: "owner"
    }),
    201
  )
  const site = { url: server.url, sandbox: carrier, production, user: { email: "owner@example.com" } }
  const { tokens } = await obtainTokens(site, await registerClient(site), { scope: "bookings:read staff:read" })
  // A calendar feed's URL token: its creation and rotation are events, which must not carry it.
  const member = expectStatus(await carrier.post("/v1/staff", { name: "Feed", time_zone: "UTC" }), 201)
  expectStatus(await carrier.post(`/v1/staff/${member.id}/calendar-feed`), 201)
  const feedUrl = expectStatus(await carrier.post(`/v1/staff/${member.id}/calendar-feed`), 201).url as string
  secrets = [
    secret("sk_test", keys.sandbox.secret),
    secret("sk_live", keys.production.secret),
    secret("pk_test", keys.sandbox.publishable),
    secret("pk_live", keys.production.publishable),
    secret("admin token", ADMIN, /^operator-token-/),
    secret("whsec", webhook.secret),
    secret("OAuth access token", tokens.access_token),
    secret("password", PASSWORD, /^$/),
    secret("calendar feed token", /([A-Za-z0-9_-]{43})\.ics$/.exec(feedUrl)![1]!, /^$/)
  ]
  for (const s of secrets) expect(s.random.length, s.kind).toBeGreaterThanOrEqual(8)
}, 180_000)
afterAll(() => killServers())

interface Attempt {
  readonly name: string
  readonly method: string
  readonly path: string
  readonly headers?: Record<string, string>
  readonly body?: unknown
}

/** Every malformed way of presenting `c`, and every wrong place to put it. */
const attemptsWith = (c: string): Array<Attempt> => [
  { name: "no scheme", method: "GET", path: "/v1/staff", headers: { authorization: c } },
  { name: "wrong scheme", method: "GET", path: "/v1/staff", headers: { authorization: `Token ${c}` } },
  { name: "a scheme made of the credential", method: "GET", path: "/v1/staff", headers: { authorization: `${c} ${c}` } },
  { name: "Basic", method: "GET", path: "/v1/staff", headers: { authorization: `Basic ${Buffer.from(`${c}:`).toString("base64")}` } },
  { name: "Basic, raw", method: "GET", path: "/v1/staff", headers: { authorization: `Basic ${c}` } },
  { name: "extra spaces", method: "GET", path: "/v1/staff", headers: { authorization: `   Bearer     ${c}   ` } },
  { name: "trailing garbage", method: "GET", path: "/v1/staff", headers: { authorization: `Bearer ${c}garbage` } },
  { name: "trailing words", method: "GET", path: "/v1/staff", headers: { authorization: `Bearer ${c} and more` } },
  { name: "lower-case bearer", method: "GET", path: "/v1/clients", headers: { authorization: `bearer ${c}` } },
  { name: "twice", method: "GET", path: "/v1/staff", headers: { authorization: `Bearer ${c}, Bearer ${c}` } },
  { name: "a write with it", method: "POST", path: "/v1/webhooks", headers: { authorization: `Bearer ${c}` }, body: { url: "ftp://x" } },
  { name: "operator route", method: "POST", path: "/admin/v1/accounts", headers: { authorization: `Bearer ${c}x` }, body: { name: "x" } },
  {
    name: "operator route, no scheme",
    method: "GET",
    path: "/admin/v1/accounts/acc_01JQ4Z8X9V3K7M2N5P6R8T0W1Y",
    headers: { authorization: c }
  },
  { name: "query api_key", method: "GET", path: `/v1/staff?api_key=${encodeURIComponent(c)}` },
  { name: "query access_token", method: "GET", path: `/v1/staff?access_token=${encodeURIComponent(c)}` },
  { name: "query cursor", method: "GET", path: `/v1/staff?cursor=${encodeURIComponent(c)}`, headers: { authorization: "carrier" } },
  { name: "query filter", method: "GET", path: `/v1/bookings?staff_id=${encodeURIComponent(c)}`, headers: { authorization: "carrier" } },
  { name: "query parameter name", method: "GET", path: `/v1/staff?${encodeURIComponent(c)}=1`, headers: { authorization: "carrier" } },
  { name: "JSON body field", method: "POST", path: "/v1/staff", headers: { authorization: "carrier" }, body: { name: "A", api_key: c } },
  { name: "JSON body key", method: "POST", path: "/v1/staff", headers: { authorization: "carrier" }, body: { name: "A", [c]: 1 } },
  { name: "JSON body email", method: "POST", path: "/v1/clients", headers: { authorization: "carrier" }, body: { name: "A", email: c } },
  {
    name: "JSON body id",
    method: "POST",
    path: "/v1/bookings",
    headers: { authorization: "carrier" },
    body: { service_id: c, start: "2027-03-29T09:00:00Z" }
  },
  { name: "GET body filter", method: "GET", path: "/v1/bookings", headers: { authorization: "carrier" }, body: { client_id: c } },
  {
    name: "Idempotency-Key",
    method: "POST",
    path: "/v1/clients",
    headers: { authorization: "carrier", "idempotency-key": c },
    body: { name: "I" }
  },
  {
    name: "Idempotency-Key reused with another body",
    method: "POST",
    path: "/v1/clients",
    headers: { authorization: "carrier", "idempotency-key": c },
    body: { name: "J" }
  },
  { name: "path id", method: "GET", path: `/v1/staff/${encodeURIComponent(c)}`, headers: { authorization: "carrier" } },
  {
    name: "path id of an action",
    method: "POST",
    path: `/v1/bookings/${encodeURIComponent(c)}/confirm`,
    headers: { authorization: "carrier" }
  },
  { name: "path id of an event", method: "GET", path: `/v1/events/${encodeURIComponent(c)}`, headers: { authorization: "carrier" } },
  {
    name: "path id of a delivery",
    method: "GET",
    path: `/v1/webhooks/${encodeURIComponent(c)}/deliveries/${encodeURIComponent(c)}`,
    headers: { authorization: "carrier" }
  },
  { name: "path segment of no route", method: "GET", path: `/v1/${encodeURIComponent(c)}`, headers: { authorization: "carrier" } },
  { name: "path segment of no route, no key", method: "DELETE", path: `/v1/${encodeURIComponent(c)}/x` },
  {
    name: "operator path id",
    method: "GET",
    path: `/admin/v1/accounts/${encodeURIComponent(c)}/users`,
    headers: { authorization: `Bearer ${ADMIN}` }
  },
  { name: "operator path, no token", method: "GET", path: `/admin/v1/accounts/${encodeURIComponent(c)}` },
  { name: "wrong method on it", method: "PUT", path: `/v1/staff/${encodeURIComponent(c)}`, headers: { authorization: "carrier" } },
  { name: "publishable without Origin", method: "GET", path: "/v1/services", headers: { authorization: `Bearer ${c}` } },
  {
    name: "from a foreign Origin",
    method: "GET",
    path: "/v1/services",
    headers: { authorization: `Bearer ${c}`, origin: "https://evil.example" }
  }
]

describe("secrets never repeated", { timeout: 180_000 }, () => {
  it("in any reply to any malformed or misplaced credential, nor in the server's output", async () => {
    const carrierKey = secrets[0]!.value
    let sent = 0
    for (const s of secrets) {
      for (const attempt of attemptsWith(s.value)) {
        const headers: Record<string, string> = { ...attempt.headers, "x-forwarded-for": nextAddress() }
        if (headers.authorization === "carrier") headers.authorization = `Bearer ${carrierKey}`
        const reply = await request(server.url, attempt.method, attempt.path, {
          headers,
          ...(attempt.body === undefined ? {} : { body: attempt.body })
        })
        sent++
        expect(reply.status, `${s.kind}, ${attempt.name}: ${reply.text}`).toBeLessThan(500)
        expect(reply.status, `${s.kind}, ${attempt.name}`).not.toBe(429)
        // A success may name the caller's own things, never the credential itself.
        expect(leaksIn(replyText(reply), secrets), `${s.kind}, ${attempt.name}: ${replyText(reply)}`).toEqual([])
      }
    }
    expect(sent).toBeGreaterThan(250)
    // Nor any event of the feed (which webhooks deliver), in either environment.
    for (const feed of [carrier, production]) {
      let after = ""
      for (;;) {
        const page = expectStatus(
          await feed.get(`/v1/events?limit=100${after === "" ? "" : `&after=${after}`}`, { headers: { "x-forwarded-for": nextAddress() } }),
          200
        )
        if (page.data.length === 0) break
        expect(leaksIn(JSON.stringify(page.data), secrets)).toEqual([])
        after = page.next_cursor
      }
    }
    // (The first start prints the first account's own keys, by design; these are another account's.)
    const printed = server.lines.join("\n")
    expect(leaksIn(`${printed}\n${stderr}`, secrets), `${printed}\n${stderr}`).toEqual([])
  })

  it("a credential without Bearer is 401 with words that say what to send, not the credential", async () => {
    const reply = await request(server.url, "GET", "/v1/staff", {
      headers: { authorization: secrets[1]!.value, "x-forwarded-for": nextAddress() }
    })
    expect(reply.status).toBe(401)
    expect(reply.json.detail).toBe("the Authorization header names no scheme: send Authorization: Bearer <API key>")
    const basic = await request(server.url, "GET", "/v1/staff", {
      headers: { authorization: `Basic ${secrets[1]!.value}`, "x-forwarded-for": nextAddress() }
    })
    expect(basic.json.detail).toBe("the Basic authorization scheme is not accepted: send Authorization: Bearer <API key>")
  })
})
