/**
 * Each request is answered as its own credential, however many run at once: requests of two
 * accounts (and of a secret and a publishable key of one account) interleaved on the server
 * and on the mounted Fetch handler, each seeing only its own account's data and audience.
 * Both run on PostgreSQL, so a write's idempotency claim waits on the database between the
 * gate's verdict and the handler, and other requests run in that gap.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createHttpHandler, type SlotwiseHttpHandler } from "../../index.js"
import { createTestDatabase, type TestDatabase } from "../postgres/database.js"
import { client, type Client, expectStatus, newAccount, startServer, type TestServer } from "./harness.js"

const ORIGIN = "https://shop.example.com"
const CONCURRENT = 50

let database: TestDatabase
let server: TestServer
/** Two accounts that allow ORIGIN: their ids, secret keys, and the first one's publishable key. */
let shop: { readonly aId: string; readonly bId: string; readonly a: Client; readonly b: Client; readonly aWidget: Client }

beforeAll(async () => {
  database = await createTestDatabase()
  server = await startServer({ storage: { postgres: database.url } })
  const [first, second] = await Promise.all(["Alpha", "Beta"].map((name) => newAccount(server, { name, allowed_origins: [ORIGIN] })))
  shop = {
    aId: first.account.id,
    bId: second.account.id,
    a: client(server.url, first.keys.sandbox.secret),
    b: client(server.url, second.keys.sandbox.secret),
    aWidget: client(server.url, first.keys.sandbox.publishable)
  }
  expectStatus(await shop.a.post("/v1/services", { name: "Alpha cut", duration_minutes: 30, metadata: { owner: "alpha" } }), 201)
  expectStatus(await shop.b.post("/v1/services", { name: "Beta cut", duration_minutes: 30, metadata: { owner: "beta" } }), 201)
})
afterAll(async () => {
  await server.close()
  await database.drop()
})

/** `CONCURRENT` calls at once, the i-th by `callers[i % callers.length]`. */
const interleaved = <A>(callers: ReadonlyArray<A>) => Array.from({ length: CONCURRENT }, (_, i) => callers[i % callers.length]!)

describe("the principal under concurrency", () => {
  it("each request reads its own account, writes into it and lists only its data", async () => {
    const { a, aId, b, bId } = shop
    const accounts = await Promise.all(
      interleaved([[a, aId], [b, bId]] as const).map(async ([api, id]) => {
        const account = expectStatus(await api.get("/v1/account"), 200)
        return [account.id, id]
      })
    )
    for (const [seen, own] of accounts) expect(seen).toBe(own)

    await Promise.all(
      interleaved([[a, "alpha"], [b, "beta"]] as const).map(async ([api, owner], i) => {
        const created = expectStatus(
          await api.post("/v1/clients", { name: `${owner} ${i}`, metadata: { owner } }, { headers: { "idempotency-key": `client-${i}` } }),
          201
        )
        expect(created.metadata).toEqual({ owner })
      })
    )
    const lists = await Promise.all(
      interleaved([[a, "alpha"], [b, "beta"]] as const).map(async ([api, owner]) => {
        const page = expectStatus(await api.get("/v1/clients?limit=100"), 200)
        return { owner, owners: page.data.map((c: { metadata: { owner: string } }) => c.metadata.owner) as Array<string> }
      })
    )
    for (const { owner, owners } of lists) expect(owners).toEqual(Array(CONCURRENT / 2).fill(owner))
  })

  it("a publishable key's requests get the visitor's view while its account's secret key gets the full one", async () => {
    const { a, aWidget, b } = shop
    const views = await Promise.all(
      interleaved(["secret", "widget", "other"] as const).map(async (who) => {
        const api = who === "secret" ? a : who === "widget" ? aWidget : b
        const page = expectStatus(await api.get("/v1/services?limit=100", who === "widget" ? { headers: { origin: ORIGIN } } : {}), 200)
        return { who, services: page.data as Array<{ name: string; metadata?: unknown }> }
      })
    )
    for (const { services, who } of views) {
      expect(services.map((s) => s.name)).toEqual([who === "other" ? "Beta cut" : "Alpha cut"])
      // The visitor's view has no metadata; the account's own does.
      expect(services[0]!.metadata).toEqual(who === "widget" ? undefined : { owner: who === "other" ? "beta" : "alpha" })
    }
  })
})

describe("the principal under concurrency on the mounted Fetch handler", () => {
  let own: TestDatabase
  let mounted: SlotwiseHttpHandler
  beforeAll(async () => {
    own = await createTestDatabase()
    mounted = await createHttpHandler({ storage: { postgres: own.url } })
  })
  afterAll(async () => {
    await mounted.close()
    await own.drop()
  })

  it("each Request is answered as its own account", async () => {
    const keys = await Promise.all(["Gamma", "Delta"].map((name) => mounted.createAccount({ name, plan: "business" })))
    const answers = await Promise.all(
      interleaved(keys).map(async (created, i) => {
        const headers = { authorization: `Bearer ${created.keys.sandbox.secret}`, "content-type": "application/json" }
        const made = await mounted.fetch(
          new Request("http://app.local/v1/staff", {
            method: "POST",
            headers: { ...headers, "idempotency-key": `staff-${i}` },
            body: JSON.stringify({ name: `${created.account.name} ${i}`, time_zone: "UTC" })
          })
        )
        expect(made.status).toBe(201)
        const account = await mounted.fetch(new Request("http://app.local/v1/account", { headers }))
        return { own: created.account.id, seen: ((await account.json()) as { id: string }).id }
      })
    )
    for (const { own, seen } of answers) expect(seen).toBe(own)
    for (const created of keys) {
      const listed = await mounted.fetch(
        new Request("http://app.local/v1/staff?limit=100", { headers: { authorization: `Bearer ${created.keys.sandbox.secret}` } })
      )
      const names = ((await listed.json()) as { data: Array<{ name: string }> }).data.map((s) => s.name.split(" ")[0])
      expect(names).toEqual(Array(CONCURRENT / 2).fill(created.account.name))
    }
  })
})
