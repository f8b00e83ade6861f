/**
 * Custom domains over HTTP against a DNS responder on 127.0.0.1: verification (found, missing,
 * other values, a resolver that fails or never answers), plans, one owner per hostname,
 * strict hostnames, `/tls/allowed`, and what a verified domain changes for publishable keys
 * (its origin, or the `Host` a same-origin request was sent to) and what spoofing does not.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { parseServe } from "../../adapters/cli/serveFlags.js"
import { type DnsResponder, startDnsResponder } from "../support/dns.js"
import { client, type Client, expectProblem, expectStatus, newAccount, startServer, type TestServer } from "./harness.js"

let dns: DnsResponder
let server: TestServer
let proxied: TestServer
let owner: Client
let publishable: Client

const PUBLIC_HOST = "api.slotwise.example"

beforeAll(async () => {
  dns = await startDnsResponder()
  const serve = { dnsServer: dns.server, dnsTimeoutMs: 600, publicUrl: `https://${PUBLIC_HOST}` }
  ;[server, proxied] = await Promise.all([startServer({ serve }), startServer({ serve: { ...serve, trustProxy: true } })])
  owner = client(server.url, server.first.keys.sandbox.secret)
  publishable = client(server.url, server.first.keys.sandbox.publishable)
})
afterAll(async () => {
  await Promise.all([server?.close(), proxied?.close()])
  await dns?.close()
})

const add = async (api: Client, hostname: string) => expectStatus(await api.post("/v1/domains", { hostname }), 201)

/** Adds `hostname`, publishes its record and verifies it. */
const claim = async (api: Client, hostname: string) => {
  const domain = await add(api, hostname)
  dns.setTxt(domain.verification.name, [domain.verification.value])
  return expectStatus(await api.post(`/v1/domains/${domain.id}/verify`), 200)
}

describe("events", () => {
  it("records domain.created, domain.verified (not a failed attempt) and domain.deleted, in the feed and the webhooks' event types", async () => {
    const domain = await add(owner, "book.events.example")
    expectProblem(await owner.post(`/v1/domains/${domain.id}/verify`), 422, "verification_failed")
    dns.setTxt(domain.verification.name, [domain.verification.value])
    const verified = expectStatus(await owner.post(`/v1/domains/${domain.id}/verify`), 200)
    expectStatus(await owner.post(`/v1/domains/${domain.id}/verify`), 200)
    expectStatus(await owner.del(`/v1/domains/${domain.id}`), 200)
    const types = "domain.created,domain.verified,domain.deleted"
    const feed = expectStatus(await owner.get(`/v1/events?types=${types}&limit=100`), 200).data.filter((e: any) =>
      e.data.object.id === domain.id
    )
    expect(feed.map((e: any) => [e.type, e.data.object.id])).toEqual([
      ["domain.created", domain.id],
      ["domain.verified", domain.id],
      ["domain.deleted", domain.id]
    ])
    expect(feed[1].data).toEqual({ object: verified, previous: { ...domain, verification: domain.verification } })
    expect(feed[2].data.object).toEqual(verified)
    const openapi = expectStatus(await owner.get("/v1/openapi.json"), 200)
    expect(JSON.stringify(openapi.components.schemas)).toContain("domain.verified")
  })
})

describe("verification", () => {
  it("creates a pending domain with its TXT record, verifies it once the record is published, and lists it", async () => {
    const domain = await add(owner, "book.verify.example")
    expect(domain).toMatchObject({
      object: "domain",
      hostname: "book.verify.example",
      status: "pending",
      verified_at: null,
      verification: { type: "TXT", name: "_slotwise.book.verify.example" }
    })
    expect(domain.id).toMatch(/^dom_[0-9A-Z]{26}$/)
    expect(domain.verification.value).toMatch(/^slotwise-verification=[0-9a-f]{32}$/)

    const missing = expectProblem(await owner.post(`/v1/domains/${domain.id}/verify`), 422, "verification_failed")
    expect(missing.detail).toContain("no TXT record found at _slotwise.book.verify.example")

    dns.setTxt(domain.verification.name, ["v=spf1 -all", "slotwise-verification=0000"])
    const other = expectProblem(await owner.post(`/v1/domains/${domain.id}/verify`), 422, "verification_failed")
    expect(other.detail).toContain("\"v=spf1 -all\", \"slotwise-verification=0000\"")
    expect(other.detail).toContain(`expected ${domain.verification.value}`)
    expect(expectStatus(await owner.get(`/v1/domains/${domain.id}`), 200).status).toBe("pending")

    dns.setTxt(domain.verification.name, ["v=spf1 -all", domain.verification.value])
    const verified = expectStatus(await owner.post(`/v1/domains/${domain.id}/verify`), 200)
    expect(verified).toMatchObject({ id: domain.id, status: "verified" })
    expect(verified.verified_at).toBe(new Date(server.now()).toISOString().replace(".000Z", "Z"))

    const page = expectStatus(await owner.get("/v1/domains"), 200)
    expect(page.data.find((d: any) => d.id === domain.id)?.status).toBe("verified")
    // Another environment of the same account does not see it.
    const production = expectStatus(await owner.post("/v1/api-keys/exchange"), 201).secret
    expect(expectStatus(await client(server.url, production).get("/v1/domains"), 200).data).toEqual([])
  })

  it("answers 422, never 500, when the resolver fails or never answers, and says which", async () => {
    const domain = await add(owner, "book.down.example")
    dns.setTxt(domain.verification.name, [domain.verification.value])
    try {
      dns.setMode("servfail")
      const failed = expectProblem(await owner.post(`/v1/domains/${domain.id}/verify`), 422, "verification_failed")
      expect(failed.detail).toMatch(/DNS resolver failed .*ESERVFAIL/)
      dns.setMode("silent")
      const before = dns.queries()
      const timedOut = expectProblem(await owner.post(`/v1/domains/${domain.id}/verify`), 422, "verification_failed")
      expect(timedOut.detail).toContain("timed out")
      expect(dns.queries()).toBeGreaterThan(before)
    } finally {
      dns.setMode("answer")
    }
    expect(expectStatus(await owner.post(`/v1/domains/${domain.id}/verify`), 200).status).toBe("verified")
  })

  it("is for the pro and business plans: free gets 403 plan_required naming them", async () => {
    const free = client(server.url, (await newAccount(server, { plan: "free" })).keys.sandbox.secret)
    const refused = expectProblem(await free.post("/v1/domains", { hostname: "book.free.example" }), 403, "plan_required")
    expect(refused.detail).toContain("pro or business")
    expect(expectStatus(await free.get("/v1/domains"), 200).data).toEqual([])
  })

  it("needs the keys:write scope", async () => {
    const reader = expectStatus(await owner.post("/v1/api-keys", { name: "reader", type: "secret", scopes: ["services:read"] }), 201)
    const refused = expectProblem(await client(server.url, reader.secret).get("/v1/domains"), 403, "forbidden")
    expect(refused.detail).toContain("keys:write")
  })

  it("refuses hostnames that are not strict lower-case ASCII names, IP addresses, ports and the server's own host, naming the field", async () => {
    const bad = [
      "Book.Example.com",
      "bücher.example",
      "localhost",
      "203.0.113.7",
      "book.example.com:443",
      "https://book.example.com",
      "book..example.com",
      "book.example.com.",
      "with space.example.com",
      "nul\u0000.example.com",
      "-book.example.com",
      `${"a".repeat(64)}.example.com`,
      `${"a.".repeat(127)}com`,
      PUBLIC_HOST,
      ""
    ]
    for (const hostname of bad) {
      const problem = expectProblem(await owner.post("/v1/domains", { hostname }), 422, "validation_failed")
      expect(problem.errors.map((e: any) => e.path), hostname).toEqual(["hostname"])
    }
    expect(expectProblem(await owner.post("/v1/domains", { hostname: "bücher.example" }), 422).errors[0].message).toContain("xn--")
    expect(await add(owner, "xn--bcher-kva.example")).toMatchObject({ hostname: "xn--bcher-kva.example" })
  })
})

describe("one owner per hostname", () => {
  it("lets several accounts hold a pending claim, the first to verify own it, and a deletion free it", async () => {
    const rival = client(server.url, (await newAccount(server)).keys.sandbox.secret)
    const mine = await add(owner, "book.shared.example")
    const theirs = await add(rival, "book.shared.example")
    // Both records published; the owner verifies first.
    dns.setTxt(mine.verification.name, [mine.verification.value, theirs.verification.value])
    expectStatus(await owner.post(`/v1/domains/${mine.id}/verify`), 200)

    const taken = expectProblem(await rival.post(`/v1/domains/${theirs.id}/verify`), 409, "domain_taken")
    expect(taken.detail).toContain("another account")
    expectProblem(await rival.post("/v1/domains", { hostname: "book.shared.example" }), 409, "domain_taken")
    expectProblem(await owner.post("/v1/domains", { hostname: "book.shared.example" }), 409, "domain_taken")
    expect(expectStatus(await rival.get(`/v1/domains/${theirs.id}`), 200).status).toBe("pending")
    // Another tenant's id is a 404, not a way to delete it.
    expectProblem(await rival.del(`/v1/domains/${mine.id}`), 404, "not_found")

    expect(expectStatus(await owner.del(`/v1/domains/${mine.id}`), 200).id).toBe(mine.id)
    expectProblem(await owner.get(`/v1/domains/${mine.id}`), 404, "not_found")
    expect(expectStatus(await rival.post(`/v1/domains/${theirs.id}/verify`), 200).status).toBe("verified")
  })
})

describe("/tls/allowed", () => {
  it("answers 200 only for verified domains, 404 for pending, unknown and deleted ones, counted per address", async () => {
    const anonymous = client(server.url)
    const domain = await add(owner, "book.tls.example")
    expectProblem(await anonymous.get("/tls/allowed?domain=book.tls.example"), 404, "not_found")
    expectProblem(await anonymous.get("/tls/allowed?domain=unknown.tls.example"), 404, "not_found")
    dns.setTxt(domain.verification.name, [domain.verification.value])
    expectStatus(await owner.post(`/v1/domains/${domain.id}/verify`), 200)
    const allowed = await anonymous.get("/tls/allowed?domain=book.tls.example")
    expect(expectStatus(allowed, 200)).toEqual({ domain: "book.tls.example", allowed: true })
    expect(allowed.headers.get("x-ratelimit-limit")).not.toBeNull()
    expectStatus(await owner.del(`/v1/domains/${domain.id}`), 200)
    expectProblem(await anonymous.get("/tls/allowed?domain=book.tls.example"), 404, "not_found")
  })
})

describe("requests for a verified domain", () => {
  const HOST = "book.origin.example"
  beforeAll(async () => {
    await claim(owner, HOST)
  })

  it("lets the account's publishable keys act from the domain's https origin, and no other account's", async () => {
    const allowed = await publishable.get("/v1/services", { headers: { origin: `https://${HOST}` } })
    expectStatus(allowed, 200)
    expect(allowed.headers.get("access-control-allow-origin")).toBe(`https://${HOST}`)
    // http:// and another port are other origins.
    expectProblem(await publishable.get("/v1/services", { headers: { origin: `http://${HOST}` } }), 403, "forbidden")
    expectProblem(await publishable.get("/v1/services", { headers: { origin: `https://${HOST}:8443` } }), 403, "forbidden")
    // Another account's publishable key.
    const other = client(server.url, (await newAccount(server)).keys.sandbox.publishable)
    expectProblem(await other.get("/v1/services", { headers: { origin: `https://${HOST}` } }), 403, "forbidden")
    // A preflight from the domain succeeds (it carries no credential).
    const preflight = await client(server.url).send("OPTIONS", "/v1/services", {
      headers: { origin: `https://${HOST}`, "access-control-request-method": "GET" }
    })
    expect(preflight.status).toBe(204)
  })

  it("treats a request sent to the domain without an Origin (a same-origin GET) as coming from it", async () => {
    expectStatus(await publishable.get("/v1/services", { headers: { host: HOST } }), 200)
  })

  it("changes nothing for a spoofed Host or Origin that is not a verified domain", async () => {
    const pending = await add(owner, "book.pending.example")
    for (const host of ["evil.example", pending.hostname, "127.0.0.1"]) {
      expectProblem(await publishable.get("/v1/services", { headers: { host } }), 403, "forbidden")
      const reply = await publishable.get("/v1/services", { headers: { host, origin: `https://${host}` } })
      expectProblem(reply, 403, "forbidden")
      expect(reply.headers.get("access-control-allow-origin")).toBeNull()
    }
  })

  it("reads X-Forwarded-Host only behind a trusted proxy", async () => {
    const forwarded = { host: "127.0.0.1", "x-forwarded-host": HOST }
    expectProblem(await publishable.get("/v1/services", { headers: forwarded }), 403, "forbidden")

    const behindProxy = client(proxied.url, proxied.first.keys.sandbox.secret)
    await claim(behindProxy, "book.proxied.example")
    const proxiedPublishable = client(proxied.url, proxied.first.keys.sandbox.publishable)
    expectStatus(
      await proxiedPublishable.get("/v1/services", { headers: { host: "127.0.0.1", "x-forwarded-host": "book.proxied.example" } }),
      200
    )
    expectProblem(
      await proxiedPublishable.get("/v1/services", { headers: { host: "127.0.0.1", "x-forwarded-host": "evil.example" } }),
      403,
      "forbidden"
    )
  })
})

describe("--dns-server", () => {
  it("takes an IP address and port, from the flag or SLOTWISE_DNS_SERVER, and refuses a name", () => {
    const flags = (args: ReadonlyArray<string>, env: NodeJS.ProcessEnv = {}) => {
      const parsed = parseServe(["--memory", ...args], env)
      return parsed === "help" ? undefined : parsed.dnsServer
    }
    expect(flags([])).toBeUndefined()
    expect(flags(["--dns-server", "127.0.0.1:5353"])).toBe("127.0.0.1:5353")
    expect(flags(["--dns-server", "[::1]:53"])).toBe("[::1]:53")
    expect(flags([], { SLOTWISE_DNS_SERVER: "10.0.0.2" })).toBe("10.0.0.2")
    expect(flags(["--dns-server", "127.0.0.1:53"], { SLOTWISE_DNS_SERVER: "10.0.0.2" })).toBe("127.0.0.1:53")
    expect(() => flags(["--dns-server", "dns.example:53"])).toThrow(/--dns-server must be an IP address/)
  })
})
