/**
 * Several `slotwise serve` processes on one PostgreSQL database (and one Redis) behave as one
 * service: the booking check stays atomic, the event feed neither misses nor repeats, a
 * key's rate limit, revocation and idempotency keys hold across instances, Redis can go away
 * and come back, and a SIGKILLed instance loses nothing it acknowledged and leaves no
 * webhook undelivered.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { AUTH_CACHE_MS } from "../../src/keys/ApiKeys.js"
import { expectProblem, expectStatus, MONDAY_9, type Reply, seed } from "../http/harness.js"
import { createTestDatabase, type TestDatabase } from "../postgres/database.js"
import { type Receiver, startReceiver, verifies, waitFor } from "../webhooks/receiver.js"
import { cli } from "../oauth/processes.js"
import { client, type Instance, killAll, type RedisServer, redisServer, serve } from "./processes.js"

const ADMIN = "multi-admin-token-0123456789"
let db: TestDatabase
let redis: RedisServer
let a: Instance
let b: Instance
let receiver: Receiver | undefined

const flags = () => [
  "--database",
  db.url,
  "--redis",
  redis.url,
  "--admin-token",
  ADMIN,
  "--allow-private-webhooks",
  "--webhook-timeout-ms",
  "2000",
  "--webhook-lease-ms",
  "3000"
]

beforeAll(async () => {
  db = await createTestDatabase()
  redis = await redisServer()
  await redis.start() // Started together: migrations run once, under the advisory lock.
  ;[a, b] = await Promise.all([serve(flags()), serve(flags())])
}, 120_000)

afterAll(async () => {
  killAll()
  await receiver?.close()
  await db?.drop()
})

/** A new account through instance A's operator API; its sandbox secret key. */
const account = async (plan: "free" | "pro" | "business" = "business"): Promise<string> =>
  expectStatus(await client(a.url, ADMIN).post("/admin/v1/accounts", { name: `Multi ${plan}`, plan }), 201).keys.sandbox.secret

const both = () => [a.url, b.url] as const

describe("two instances on one PostgreSQL database", () => {
  it(
    "started together on an empty database: one first account; --help names the flags and variables; accounts create works on a postgres:// database",
    async () => {
      expect([a, b].filter((i) => i.lines.some((l) => /sk_test_\w+/.test(l)))).toHaveLength(1)
      // The binary in child processes that do not block this one (a blocked test worker misses vitest's own heartbeats).
      const help = await cli(["--help"])
      for (const flag of ["--database <file|url>", "postgres://", "SLOTWISE_DATABASE_URL", "--redis", "SLOTWISE_REDIS_URL"]) {
        expect(help.stdout).toContain(flag)
      }
      const created = await cli(["accounts", "create", "--database", db.url, "--name", "Offline", "--json"])
      expect(created.status, created.stderr).toBe(0)
      const key = JSON.parse(created.stdout).keys.sandbox.secret as string
      // The running instances see the account created offline.
      await Promise.all(both().map(async (url) => expect((await client(url, key).get("/v1/account")).json.name).toBe("Offline")))
    },
    120_000
  )

  it("200 concurrent creates for one seat: one 201, the rest 409; overlapping starts: one; capacity 3: three", async () => {
    const key = await account()
    const race = async (bodies: ReadonlyArray<Record<string, unknown>>) => {
      const replies = await Promise.all(bodies.map((body, i) => client(both()[i % 2]!, key).post("/v1/bookings", body)))
      for (const r of replies.filter((r) => r.status !== 201)) expectProblem(r, 409, "slot_unavailable")
      return replies.filter((r) => r.status === 201).length
    }
    const one = await seed(client(a.url, key))
    const base = { service_id: one.service.id, staff_id: one.staff.id, client_id: one.client.id }
    expect(await race(Array.from({ length: 200 }, () => ({ ...base, start: MONDAY_9 })))).toBe(1)

    // 30-minute bookings at 10:00 and 10:15 overlap without being equal.
    const starts = ["2027-03-29T10:00:00Z", "2027-03-29T10:15:00Z"]
    expect(await race(Array.from({ length: 200 }, (_, i) => ({ ...base, start: starts[(i >> 1) % 2] })))).toBe(1)

    const three = await seed(client(b.url, key), { capacity: 3 })
    const body = { service_id: three.service.id, staff_id: three.staff.id, client_id: three.client.id, start: MONDAY_9 }
    expect(await race(Array.from({ length: 200 }, () => body))).toBe(3)
    for (const url of both()) {
      const list = expectStatus(await client(url, key).get(`/v1/bookings?staff_id=${three.staff.id}`), 200)
      expect(list.data).toHaveLength(3)
    }
  }, 120_000)

  it("four writers on two instances and a poller: every event exactly once, in commit order", async () => {
    const key = await account()
    const perWriter = 25
    let writing = true
    const seen: Array<{ id: string; type: string; object: { id: string; name: string } }> = []
    const poller = (async () => {
      let cursor: string | null = null
      for (let i = 0;; i++) {
        const query: string = cursor === null ? "" : `&after=${encodeURIComponent(cursor)}`
        const page = expectStatus(await client(both()[i % 2]!, key).get(`/v1/events?limit=100${query}`), 200)
        for (const e of page.data) seen.push({ id: e.id, type: e.type, object: e.data.object })
        cursor = page.next_cursor ?? cursor
        if (!writing && page.data.length === 0 && seen.length >= 4 * perWriter) return
        if (page.data.length === 0) await new Promise((r) => setImmediate(r))
      }
    })()
    const written = await Promise.all([0, 1, 2, 3].map(async (w) => {
      const api = client(both()[w % 2]!, key)
      const ids: Array<string> = []
      for (let n = 0; n < perWriter; n++) {
        ids.push(expectStatus(await api.post("/v1/clients", { name: `w${w}-${n}` }), 201).id)
      }
      return ids
    }))
    writing = false
    await poller
    const ids = seen.map((e) => e.id)
    expect(new Set(ids).size).toBe(ids.length) // nothing repeated
    const created = seen.filter((e) => e.type === "client.created").map((e) => e.object.id)
    expect(created.sort()).toEqual(written.flat().sort()) // nothing missed
    // Each writer's creates commit one after another: the feed shows them in that order.
    for (const ids of written) {
      const positions = ids.map((id) => seen.findIndex((e) => e.object.id === id))
      expect(positions).toEqual([...positions].sort((x, y) => x - y))
    }
  }, 120_000)

  it("a free-plan key through both instances with --redis: at most 60 admitted", async () => {
    const key = await account("free")
    const statuses: Array<number> = []
    for (let round = 0; round < 30; round++) {
      const replies = await Promise.all(Array.from({ length: 5 }, (_, i) => client(both()[i % 2]!, key).get("/v1/account")))
      for (const r of replies) {
        if (r.status === 429) expectProblem(r, 429, "rate_limited")
        else expect(r.status).toBe(200)
        statuses.push(r.status)
      }
    }
    const admitted = statuses.filter((s) => s === 200).length
    expect(admitted).toBeLessThanOrEqual(60) // each instance counting alone would admit 120
    expect(admitted).toBeGreaterThan(0)
    expect(statuses.filter((s) => s === 429).length).toBe(150 - admitted)
  }, 120_000)

  it("a key revoked or rotated through one instance stops working on the other at once", async () => {
    const key = await account()
    const admin = client(a.url, key)
    const extra = expectStatus(await admin.post("/v1/api-keys", { name: "to revoke", type: "secret" }), 201)
    const rotated = expectStatus(await admin.post("/v1/api-keys", { name: "to rotate", type: "secret" }), 201)
    // B has both secrets cached.
    const primedAt = Date.now()
    expect((await client(b.url, extra.secret).get("/v1/account")).status).toBe(200)
    expect((await client(b.url, rotated.secret).get("/v1/account")).status).toBe(200)
    expectStatus(await admin.del(`/v1/api-keys/${extra.id}`), 200)
    const fresh = expectStatus(await admin.post(`/v1/api-keys/${rotated.id}/rotate`, { grace_period_seconds: 0 }), 200)
    await waitFor(async () => (await client(b.url, extra.secret).get("/v1/account")).status === 401, 20_000, "revocation on B")
    await waitFor(async () => (await client(b.url, rotated.secret).get("/v1/account")).status === 401, 20_000, "rotation on B")
    // Sooner than B's cache would have let them lapse by itself.
    expect(Date.now() - primedAt).toBeLessThan(AUTH_CACHE_MS)
    expect((await client(b.url, fresh.secret).get("/v1/account")).status).toBe(200)
  }, 120_000)

  it("idempotency keys: a repeat through the other instance replays; concurrent duplicates give 409 idempotency_conflict", async () => {
    const key = await account()
    const api = client(a.url, key)
    const headers = { "idempotency-key": "multi-replay" }
    const first = await api.post("/v1/clients", { name: "Once" }, { headers })
    expect(first.status).toBe(201)
    const again = await client(b.url, key).post("/v1/clients", { name: "Once" }, { headers })
    expect(again.status).toBe(201)
    expect(again.headers.get("idempotent-replayed")).toBe("true")
    expect(again.json).toEqual(first.json)

    let conflicts = 0
    for (let round = 0; round < 5 && conflicts === 0; round++) {
      const dup = { "idempotency-key": `multi-dup-${round}` }
      const replies = await Promise.all(
        Array.from({ length: 20 }, (_, i) => client(both()[i % 2]!, key).post("/v1/clients", { name: `Dup ${round}` }, { headers: dup }))
      )
      const originals = replies.filter((r) => r.status === 201 && r.headers.get("idempotent-replayed") !== "true")
      expect(originals).toHaveLength(1)
      for (const r of replies) {
        if (r.status === 409) expectProblem(r, 409, "idempotency_conflict")
        else expect(r.json).toEqual(originals[0]!.json)
      }
      conflicts += replies.filter((r) => r.status === 409).length
      const list = expectStatus(await api.get("/v1/clients?limit=100"), 200)
      expect(list.data.filter((c: { name: string }) => c.name === `Dup ${round}`)).toHaveLength(1)
    }
    expect(conflicts).toBeGreaterThan(0)
  }, 120_000)

  it("Redis stopped and started again: requests are served throughout, and counting resumes", async () => {
    const key = await account("pro")
    const remaining = (r: Reply) => Number(r.headers.get("x-ratelimit-remaining"))
    const counting = async () => {
      const x = await client(a.url, key).get("/v1/account")
      const y = await client(b.url, key).get("/v1/account")
      return x.status === 200 && y.status === 200 && remaining(y) < remaining(x) // one shared counter
    }
    expect(await counting()).toBe(true)
    await redis.stop()
    for (let i = 0; i < 20; i++) expect((await client(both()[i % 2]!, key).get("/v1/account")).status).toBe(200)
    await redis.start()
    await waitFor(counting, 20_000, "counting in Redis again")
  }, 120_000)

  it("SIGKILL of one instance during writes and webhook deliveries: nothing acknowledged is lost, every event is delivered", async () => {
    const key = await account()
    // The receiver holds every answer until the instance is dead, so it dies with attempts in
    // flight; the deliveries whose connection it cut must come again from the survivor.
    const held: Array<() => void> = []
    const cut: Array<string> = []
    let released = false
    const rx = receiver = await startReceiver((request, res) => {
      const answer = () => {
        if (!res.destroyed) {
          res.writeHead(200)
          res.end("ok")
        }
      }
      res.on("close", () => {
        if (!res.writableFinished) cut.push(request.id)
      })
      if (released) answer()
      else held.push(answer)
    })
    const hook = expectStatus(await client(a.url, key).post("/v1/webhooks", { url: rx.url, events: ["client.created"] }), 201)
    const acknowledged: Array<string> = []
    let killed = false
    const writers = [0, 1, 2, 3].map(async (w) => {
      for (let n = 0; n < 30; n++) {
        const url = killed ? a.url : both()[w % 2]!
        const reply = await client(url, key).post("/v1/clients", { name: `k${w}-${n}` }).catch(() => undefined)
        if (reply?.status === 201) acknowledged.push(reply.json.id)
        if (!killed && acknowledged.length >= 40 && rx.received.length >= 8) {
          killed = true
          b.process.kill("SIGKILL")
          void b.exited.then(() => {
            released = true
            for (const answer of held.splice(0)) answer()
          })
        }
      }
    })
    await Promise.all(writers)
    expect(killed).toBe(true)
    await b.exited
    // Every acknowledged create is stored.
    const stored = new Set<string>()
    let cursor: string | null = null
    do {
      const query: string = cursor === null ? "" : `&cursor=${encodeURIComponent(cursor)}`
      const page = expectStatus(await client(a.url, key).get(`/v1/clients?limit=100${query}`), 200)
      for (const c of page.data) stored.add(c.id)
      cursor = page.next_cursor
    } while (cursor !== null)
    for (const id of acknowledged) expect(stored.has(id)).toBe(true)
    // Every client.created event reaches the receiver, signed, with the event id as webhook-id;
    // the dead instance's leases are taken over when they end.
    const events: Array<{ id: string }> = []
    cursor = null
    for (;;) {
      const query: string = cursor === null ? "" : `&after=${encodeURIComponent(cursor)}`
      const page = expectStatus(await client(a.url, key).get(`/v1/events?types=client.created&limit=100${query}`), 200)
      events.push(...page.data)
      if (page.data.length === 0 || page.next_cursor === null) break
      cursor = page.next_cursor
    }
    expect(events.length).toBe(stored.size)
    await waitFor(() => events.every((e) => rx.countOf(e.id) > 0), 30_000, "every event delivered")
    for (const request of rx.received) expect(verifies(hook.secret, request)).toBe(true)
    // The dead instance had attempts in flight; each was sent again (same webhook-id) once its lease ended.
    expect(cut.length).toBeGreaterThan(0)
    await waitFor(() => cut.every((id) => rx.countOf(id) >= 2), 30_000, "leases taken over")
  }, 120_000)
})
