/**
 * Hosted pages over HTTP: the service list and booking page of a handle, the manage page, the
 * 404 pages, their security headers and Open Graph tags, escaping of what accounts write,
 * language and theme, the derived hosted-page key (usable only from the server's own pages),
 * `/` on a verified custom domain, manage links under that domain, and the per-address limit.
 */
import Database from "better-sqlite3"
import { mkdtempSync, rmSync } from "node:fs"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import { createHttpHandler } from "../../compose.js"
import { type DnsResponder, startDnsResponder } from "../support/dns.js"
import { client, type Client, expectStatus, MONDAY_9, newAccount, request, seed, startServer, type TestServer } from "./harness.js"

let dns: DnsResponder
let server: TestServer
let owner: Client
let account: { id: string; name: string; handle: string }
let setup: Awaited<ReturnType<typeof seed>>

const PUBLIC_URL = "https://pages.slotwise.example"

beforeAll(async () => {
  dns = await startDnsResponder()
  server = await startServer({ serve: { dnsServer: dns.server, dnsTimeoutMs: 600, publicUrl: PUBLIC_URL } })
  const created = await newAccount(server, { name: "Salon <Ana> & \"Co\"", plan: "pro" })
  account = created.account
  owner = client(server.url, created.keys.production.secret)
  setup = await seed(owner, { price: { amount: 3500, currency: "EUR" } })
})
afterAll(async () => {
  await server?.close()
  await dns?.close()
})
// Pages are counted per client address: a fresh window for each test.
beforeEach(async () => {
  await server.advance(61_000)
})

const get = (path: string, headers: Record<string, string> = {}) => request(server.url, "GET", path, { headers })
const meta = (html: string, property: string) => new RegExp(`<meta property="${property}" content="([^"]*)">`).exec(html)?.[1]
const keyIn = (html: string) => /data-key="(pk_(?:live|test)_[0-9a-f]{64})"/.exec(html)?.[1]

const expectPageHeaders = (headers: Headers) => {
  const csp = headers.get("content-security-policy") ?? ""
  expect(csp).toContain("default-src 'none'")
  expect(csp).toContain("script-src 'self'")
  expect(csp).toContain("frame-ancestors 'none'")
  expect(csp).not.toContain("unsafe-inline")
  expect(headers.get("x-frame-options")).toBe("DENY")
  expect(headers.get("referrer-policy")).toBe("no-referrer")
  expect(headers.get("x-content-type-options")).toBe("nosniff")
  expect(headers.get("content-type")).toBe("text/html; charset=utf-8")
}

describe("the booking pages of a handle", () => {
  it("lists the active services with durations, prices and links, under the page headers and OG tags", async () => {
    const inactive = expectStatus(
      await owner.post("/v1/services", { name: "Retired", duration_minutes: 15, staff_ids: [setup.staff.id], active: false }),
      201
    )
    const reply = await get(`/book/${account.handle}`)
    expect(reply.status).toBe(200)
    expectPageHeaders(reply.headers)
    expect(reply.text).toContain(`<a href="/book/${account.handle}/${setup.service.id}" data-service="${setup.service.id}">`)
    expect(reply.text).toContain("30 min · €35.00")
    expect(reply.text).not.toContain(inactive.id)
    expect(reply.text).toContain("<link rel=\"stylesheet\" href=\"/pages.css\">")
    expect(meta(reply.text, "og:title")).toBe("Book with Salon &lt;Ana&gt; &amp; &quot;Co&quot;")
    expect(meta(reply.text, "og:url")).toBe(`${PUBLIC_URL}/book/${account.handle}`)
    expect(meta(reply.text, "og:type")).toBe("website")
    expect(meta(reply.text, "og:description")).toBe("Cut")
    // The page lists; it does not book: no key, no widget.
    expect(keyIn(reply.text)).toBeUndefined()
    expect(reply.text).not.toContain("widget.js")
  })

  it("escapes everything an account writes: names, descriptions", async () => {
    const hostile = expectStatus(
      await owner.post("/v1/services", {
        name: "<img src=x onerror=alert(1)>",
        description: "\"><script>alert(2)</script>",
        duration_minutes: 30,
        staff_ids: [setup.staff.id]
      }),
      201
    )
    for (const path of [`/book/${account.handle}`, `/book/${account.handle}/${hostile.id}`]) {
      const { status, text } = await get(path)
      expect(status).toBe(200)
      expect(text).not.toContain("<img src=x")
      expect(text).not.toContain("<script>alert")
      expect(text).not.toContain("Salon <Ana>")
      expect(text).toContain("&lt;img src=x onerror=alert(1)&gt;")
      expect(text).toContain("Salon &lt;Ana&gt; &amp; &quot;Co&quot;")
    }
  })

  it("a service's page mounts the widget with that service and the account's hosted-page key of the environment", async () => {
    const reply = await get(`/book/${account.handle}/${setup.service.id}`)
    expect(reply.status).toBe(200)
    expectPageHeaders(reply.headers)
    expect(reply.text).toContain(`data-service="${setup.service.id}"`)
    expect(reply.text).toContain("<script src=\"/widget.js\" defer></script>")
    expect(meta(reply.text, "og:title")).toBe("Book Cut with Salon &lt;Ana&gt; &amp; &quot;Co&quot;")
    const key = keyIn(reply.text)!
    expect(key).toMatch(/^pk_live_/)
    // Every page view embeds the same derived key, created once.
    expect(keyIn((await get(`/book/${account.handle}/${setup.service.id}`)).text)).toBe(key)
    const keys = expectStatus(await owner.get("/v1/api-keys?type=publishable"), 200).data
    const hosted = keys.filter((k: any) => k.metadata.slotwise_hosted_pages === "true")
    expect(hosted).toHaveLength(1)
    expect(hosted[0]).toMatchObject({ name: "Hosted booking pages (managed by Slotwise)", environment: "production" })
    expect(JSON.stringify(keys)).not.toContain(key)

    // The key works from the server's own pages (same origin: no Origin, or this host's) ...
    const host = new URL(server.url).host
    expectStatus(await request(server.url, "GET", "/v1/widget/config", { key }), 200)
    expectStatus(await request(server.url, "GET", `/v1/services/${setup.service.id}`, { key, headers: { origin: `http://${host}` } }), 200)
    // ... and from nowhere else.
    expect((await request(server.url, "GET", "/v1/widget/config", { key, headers: { origin: "https://evil.example" } })).status).toBe(403)

    // The sandbox has its own pages and key.
    const sandbox = await get(`/book/${account.handle}/sandbox`)
    expect(sandbox.status).toBe(200)
    expect(sandbox.text).toContain("<meta name=\"robots\" content=\"noindex, nofollow\">")
    expect(sandbox.text).toContain("Test mode")
    expect(sandbox.text).not.toContain(setup.service.id)
  })

  it("answers unknown handles, unknown or inactive services and malformed paths with the 404 page", async () => {
    const retired = expectStatus(
      await owner.post("/v1/services", { name: "Old", duration_minutes: 15, staff_ids: [setup.staff.id], active: false }),
      201
    )
    for (const path of ["/book/acct_nobody", `/book/${account.handle}/svc_missing`, `/book/${account.handle}/${retired.id}`]) {
      const reply = await get(path)
      expect(reply.status, path).toBe(404)
      expectPageHeaders(reply.headers)
      expect(reply.text).toContain("<h1>Page not found</h1>")
      expect(keyIn(reply.text)).toBeUndefined()
    }
    // Not a page at all: the API's own 404.
    expect((await get(`/book/${account.handle}/a/b/c`)).headers.get("content-type")).toContain("application/problem+json")
  })
})

describe("the manage page", () => {
  it("mounts the widget in manage mode for a valid link, never cached; one 404 page for unknown, malformed and rotated links", async () => {
    const booking = expectStatus(
      await owner.post("/v1/bookings", {
        service_id: setup.service.id,
        staff_id: setup.staff.id,
        client_id: setup.client.id,
        start: MONDAY_9
      }),
      201
    )
    const path = new URL(booking.manage_url).pathname
    const token = path.split("/manage/")[1]!
    const reply = await get(path)
    expect(reply.status).toBe(200)
    expectPageHeaders(reply.headers)
    expect(reply.headers.get("cache-control")).toBe("no-store")
    expect(reply.text).toContain(`data-manage-token="${token}"`)
    expect(reply.text).not.toContain("data-key")
    expect(reply.text).toContain("<meta name=\"robots\" content=\"noindex, nofollow\">")
    expect(meta(reply.text, "og:title")).toBe("Cut · Your booking with Salon &lt;Ana&gt; &amp; &quot;Co&quot;")

    const unknown = await get(`/manage/${token.slice(0, -2)}xx`)
    const malformed = await get("/manage/not-a-token")
    expectStatus(await owner.post(`/v1/bookings/${booking.id}/manage-link/rotate`), 200)
    const rotated = await get(path)
    for (const bad of [unknown, malformed, rotated]) {
      expect(bad.status).toBe(404)
      expectPageHeaders(bad.headers)
      expect(bad.headers.get("cache-control")).toBe("no-store")
      expect(bad.text).toContain("This link is no longer valid.")
      expect(bad.text).not.toContain("data-manage-token")
    }
    // Nothing says which part was wrong: the pages differ only in the URL they name.
    const strip = (html: string) => html.replace(/content="[^"]*\/manage\/[^"]*"/g, "")
    expect(strip(unknown.text)).toBe(strip(rotated.text))
    expect(strip(malformed.text)).toBe(strip(rotated.text))
  })
})

describe("language, theme and the style sheet", () => {
  it("picks en or de from Accept-Language by quality, and a theme from ?theme", async () => {
    const lang = async (header: string) =>
      /<html lang="(\w+)"/.exec((await get(`/book/${account.handle}`, { "accept-language": header })).text)?.[1]
    expect(await lang("de-DE,de;q=0.9,en;q=0.5")).toBe("de")
    expect(await lang("fr-FR, de;q=0.4")).toBe("de")
    expect(await lang("de;q=0.2, en-GB;q=0.8")).toBe("en")
    expect(await lang("fr")).toBe("en")
    const german = (await get(`/book/${account.handle}`, { "accept-language": "de" })).text
    expect(german).toContain("Termin bei Salon &lt;Ana&gt; &amp; &quot;Co&quot; buchen")
    expect(german).toContain("30 Min.")

    expect((await get(`/book/${account.handle}?theme=dark`)).text).toContain("<html lang=\"en\" data-theme=\"dark\">")
    const auto = (await get(`/book/${account.handle}?theme=<x>`)).text
    expect(auto).toContain("<html lang=\"en\">")
    expect(auto).toContain("<meta name=\"color-scheme\" content=\"light dark\">")
    expect((await get(`/book/${account.handle}/${setup.service.id}?theme=light`)).text).toContain("data-theme=\"light\"")
  })

  it("serves the page CSS with an ETag and answers a revalidation with 304", async () => {
    const css = await get("/pages.css")
    expect(css.status).toBe(200)
    expect(css.headers.get("content-type")).toBe("text/css; charset=utf-8")
    expect(css.text).toContain("prefers-color-scheme:dark")
    const etag = css.headers.get("etag")!
    expect((await get("/pages.css", { "if-none-match": etag })).status).toBe(304)
  })
})

describe("branding", () => {
  it("shows the display name, logo and colour, and drops \"Powered by\" when the plan allows hiding it", async () => {
    const before = (await get(`/book/${account.handle}`)).text
    expect(before).toContain("Powered by Slotwise")
    expectStatus(
      await owner.patch("/v1/account", {
        branding: {
          display_name: "Ana's <Studio>",
          logo_url: "https://cdn.example/logo.png",
          primary_color: "#aa0000",
          hide_powered_by: true
        }
      }),
      200
    )
    try {
      const list = (await get(`/book/${account.handle}`)).text
      expect(meta(list, "og:title")).toBe("Book with Ana&#39;s &lt;Studio&gt;")
      expect(list).toContain("<img src=\"https://cdn.example/logo.png\" alt=\"\">")
      expect(list).not.toContain("Powered by Slotwise")
      const service = (await get(`/book/${account.handle}/${setup.service.id}`)).text
      expect(service).toContain("data-primary-color=\"#aa0000\"")
      expect(service).toContain("data-hide-branding=\"true\"")
    } finally {
      expectStatus(
        await owner.patch("/v1/account", { branding: { display_name: null, logo_url: null, primary_color: null, hide_powered_by: false } }),
        200
      )
    }
  })
})

describe("custom domains and limits", () => {
  it("on a verified custom domain / is the account's page and manage links point there; elsewhere / is the API's document", async () => {
    const domain = expectStatus(await owner.post("/v1/domains", { hostname: "book.ana.example" }), 201)
    dns.setTxt(domain.verification.name, [domain.verification.value])
    expectStatus(await owner.post(`/v1/domains/${domain.id}/verify`), 200)

    const root = await get("/", { host: "book.ana.example" })
    expect(root.status).toBe(200)
    expectPageHeaders(root.headers)
    expect(root.text).toContain(`href="/book/${account.handle}/${setup.service.id}"`)
    expect(meta(root.text, "og:url")).toBe("https://book.ana.example/")

    const booking = expectStatus(
      await owner.post("/v1/bookings", {
        service_id: setup.service.id,
        staff_id: setup.staff.id,
        client_id: setup.client.id,
        start: "2027-03-29T11:00:00Z"
      }),
      201
    )
    expect(booking.manage_url).toMatch(/^https:\/\/book\.ana\.example\/manage\//)
    const listed = expectStatus(await owner.get("/v1/bookings"), 200).data
    expect(listed.map((b: any) => b.id)).toContain(booking.id)
    for (const each of listed) expect(each.manage_url).toMatch(/^https:\/\/book\.ana\.example\/manage\//)
    const manage = await get(new URL(booking.manage_url).pathname, { host: "book.ana.example" })
    expect(manage.status).toBe(200)
    expect(meta(manage.text, "og:url")).toBe(booking.manage_url)

    const api = await get("/")
    expect(api.json).toMatchObject({ name: "slotwise", docs: "/docs" })
    expect((await get("/", { host: "unknown.example" })).json).toMatchObject({ name: "slotwise" })
    // X-Forwarded-Host counts only behind a trusted proxy (--trust-proxy), which this server is not.
    expect((await get("/", { "x-forwarded-host": "book.ana.example" })).json).toMatchObject({ name: "slotwise" })
  })

  it("counts page views per client address like anonymous requests", async () => {
    let last = await get(`/book/${account.handle}`)
    for (let i = 1; i < 61 && last.status === 200; i++) last = await get(`/book/${account.handle}`)
    expect(last.status).toBe(429)
    expect(Number(last.headers.get("retry-after"))).toBeGreaterThan(0)
    expectPageHeaders(last.headers)
    // The style sheet is not counted.
    expect((await get("/pages.css")).status).toBe(200)
  })
})

describe("under a mount prefix", () => {
  it("serves the pages, their assets and the API calls they make under the prefix", async () => {
    const mounted = await startServer({ serve: { prefix: "/scheduling" } })
    try {
      const created = await newAccount(mounted, { name: "Prefixed Salon" })
      const api = client(mounted.url, created.keys.production.secret)
      const { service, staff, client: visitor } = await seed({
        ...api,
        get: (p, o) => api.get(`/scheduling${p}`, o),
        post: (p, b, o) => api.post(`/scheduling${p}`, b, o)
      })
      const page = await request(mounted.url, "GET", `/scheduling/book/${created.account.handle}/${service.id}`)
      expect(page.status).toBe(200)
      expect(page.text).toContain("<link rel=\"stylesheet\" href=\"/scheduling/pages.css\">")
      expect(page.text).toContain("<script src=\"/scheduling/widget.js\" defer></script>")
      expect(page.text).toContain("data-base-url=\"/scheduling\"")
      expect(meta(page.text, "og:url")).toBe(`http://${new URL(mounted.url).host}/scheduling/book/${created.account.handle}/${service.id}`)
      expect((await request(mounted.url, "GET", "/scheduling/pages.css")).status).toBe(200)
      expectStatus(await request(mounted.url, "GET", "/scheduling/v1/widget/config", { key: keyIn(page.text)! }), 200)
      // Manage links point under the prefix too, where the manage page answers.
      const booking = expectStatus(
        await api.post("/scheduling/v1/bookings", { service_id: service.id, staff_id: staff.id, client_id: visitor.id, start: MONDAY_9 }),
        201
      )
      expect(booking.manage_url.startsWith(`${mounted.url}/scheduling/manage/`)).toBe(true)
      expect((await request(mounted.url, "GET", new URL(booking.manage_url).pathname)).text).toContain("data-manage-token")
      // Outside the prefix there are no pages.
      expect((await request(mounted.url, "GET", `/book/${created.account.handle}`)).status).toBe(404)
    } finally {
      await mounted.close()
    }
  })
})

describe("the hosted-page key across instances", () => {
  it("a server and a mounted handler on one database derive the same key and store it once, only as its hash", async () => {
    const dir = mkdtempSync(join(tmpdir(), "slotwise-hosted-"))
    const storage = { sqlite: join(dir, "slotwise.db") }
    const first = await startServer({ storage })
    const handler = await createHttpHandler({ storage, webhooks: false })
    const second = http.createServer(handler.node)
    await new Promise<void>((resolve) => second.listen(0, "127.0.0.1", resolve))
    const secondUrl = `http://127.0.0.1:${(second.address() as AddressInfo).port}`
    try {
      const sandbox = client(first.url, first.first.keys.sandbox.secret)
      const { service } = await seed(sandbox)
      const path = `/book/${first.first.account.handle}/sandbox/${service.id}`
      const pages = await Promise.all([first.url, secondUrl, first.url].map((url) => request(url, "GET", path)))
      const keys = pages.map((p) => keyIn(p.text))
      expect(keys[0]).toMatch(/^pk_test_/)
      expect(new Set(keys).size).toBe(1)
      const listed = expectStatus(await sandbox.get("/v1/api-keys?type=publishable"), 200).data
      expect(listed.filter((k: any) => k.metadata.slotwise_hosted_pages === "true")).toHaveLength(1)
      const db = new Database(storage.sqlite, { readonly: true })
      try {
        const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as Array<{ name: string }>
        const dump = JSON.stringify(tables.map((t) => db.prepare(`SELECT * FROM "${t.name}"`).all()))
        expect(dump).not.toContain(keys[0]!.slice(8))
      } finally {
        db.close()
      }
    } finally {
      await new Promise((resolve) => second.close(resolve))
      await handler.close()
      await first.close()
      rmSync(dir, { recursive: true, force: true })
    }
  })
})

describe("a changed handle", () => {
  let own: TestServer
  beforeAll(async () => {
    own = await startServer()
  })
  afterAll(() => own?.close())

  it("redirects the former handle's pages to the new handle's for 30 days, path and query kept; then it is free for another account", async () => {
    const dom = await newAccount(own, { name: "Dom", handle: "dom-y" })
    const api = client(own.url, dom.keys.production.secret)
    const service = (await seed(api)).service
    expectStatus(await api.patch("/v1/account", { handle: "dom-z" }), 200)
    for (
      const [from, to] of [
        ["/book/dom-y", "/book/dom-z"],
        ["/book/dom-y/", "/book/dom-z"],
        ["/book/dom-y?theme=dark&x=%C3%A9", "/book/dom-z?theme=dark&x=%C3%A9"],
        ["/book/dom-y?next=/a?b", "/book/dom-z?next=/a?b"],
        [`/book/dom-y/${service.id}?theme=light`, `/book/dom-z/${service.id}?theme=light`],
        ["/book/d%6Fm-y/sandbox", "/book/dom-z/sandbox"],
        [`/book/dom-y/sandbox/${service.id}`, `/book/dom-z/sandbox/${service.id}`]
      ]
    ) {
      const reply = await request(own.url, "GET", from!)
      expect([from, reply.status, reply.headers.get("location")]).toEqual([from, 308, to])
      // Not for good: the former owner may take it back within the 30 days.
      expect(reply.headers.get("cache-control")).toBe("no-store")
    }
    expect((await request(own.url, "GET", "/book/dom-z")).status).toBe(200)
    const other = client(own.url, (await newAccount(own, { name: "Other" })).keys.production.secret)
    expect(expectStatus(await other.patch("/v1/account", { handle: "dom-y" }), 409).code).toBe("handle_taken")
    await own.advance(30 * 24 * 60 * 60 * 1000)
    expect((await request(own.url, "GET", "/book/dom-y")).status).toBe(404)
    expectStatus(await other.patch("/v1/account", { handle: "dom-y" }), 200)
    expect((await request(own.url, "GET", "/book/dom-y")).status).toBe(200)
  })
})
