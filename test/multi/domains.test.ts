/**
 * Custom domains across two `slotwise serve` processes on one PostgreSQL database: a domain
 * verified through one instance resolves on the other, and a deletion through one stops the
 * other from serving it, both sooner than the lookup cache's lifetime (the instances tell each
 * other over LISTEN/NOTIFY). `--dns-server` points both at a responder on 127.0.0.1.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { DEFAULT_DOMAIN_CACHE_TTL_MS } from "../../src/domains/Domains.js"
import { expectStatus } from "../http/harness.js"
import { createTestDatabase, type TestDatabase } from "../postgres/database.js"
import { type DnsResponder, startDnsResponder } from "../support/dns.js"
import { waitFor } from "../webhooks/receiver.js"
import { client, type Instance, killAll, serve } from "./processes.js"

const ADMIN = "domains-admin-token-0123456789"
const HOST = "book.multi.example"
let db: TestDatabase
let dns: DnsResponder
let a: Instance
let b: Instance

beforeAll(async () => {
  db = await createTestDatabase()
  dns = await startDnsResponder()
  const flags = ["--database", db.url, "--admin-token", ADMIN, "--dns-server", dns.server]
  ;[a, b] = await Promise.all([serve(flags), serve(flags)])
}, 120_000)

afterAll(async () => {
  killAll()
  await dns?.close()
  await db?.drop()
})

/** Whether `instance` would let a certificate be issued for HOST. */
const tlsStatus = async (instance: Instance) => (await client(instance.url).get(`/tls/allowed?domain=${HOST}`)).status

describe("custom domains on two instances", () => {
  it(
    "a domain verified on one instance resolves on the other, and a deletion on one reaches the other, within the cache's lifetime",
    async () => {
      const created = expectStatus(await client(a.url, ADMIN).post("/admin/v1/accounts", { name: "Multi domains", plan: "pro" }), 201)
      const secretA = client(a.url, created.keys.sandbox.secret)
      const secretB = client(b.url, created.keys.sandbox.secret)
      const publishableB = client(b.url, created.keys.sandbox.publishable)

      const domain = expectStatus(await secretA.post("/v1/domains", { hostname: HOST }), 201)
      // B looks the hostname up first, so it holds a negative answer in its cache.
      expect(await tlsStatus(b)).toBe(404)
      expect((await publishableB.get("/v1/services", { headers: { origin: `https://${HOST}` } })).status).toBe(403)

      dns.setTxt(domain.verification.name, [domain.verification.value])
      expect(expectStatus(await secretA.post(`/v1/domains/${domain.id}/verify`), 200).status).toBe("verified")
      const verifiedAt = Date.now()
      await waitFor(async () => (await tlsStatus(b)) === 200, 30_000, "instance B to serve the verified domain")
      expect(Date.now() - verifiedAt).toBeLessThan(DEFAULT_DOMAIN_CACHE_TTL_MS)
      expectStatus(await publishableB.get("/v1/services", { headers: { origin: `https://${HOST}` } }), 200)
      expect(expectStatus(await secretB.get(`/v1/domains/${domain.id}`), 200).status).toBe("verified")

      // A caches the positive answer, then the deletion goes through B.
      expect(await tlsStatus(a)).toBe(200)
      expectStatus(await secretB.del(`/v1/domains/${domain.id}`), 200)
      const deletedAt = Date.now()
      await waitFor(async () => (await tlsStatus(a)) === 404, 30_000, "instance A to stop serving the deleted domain")
      expect(Date.now() - deletedAt).toBeLessThan(DEFAULT_DOMAIN_CACHE_TTL_MS)
    },
    90_000
  )
})
