/**
 * Two `slotwise serve` processes on one PostgreSQL database and one Redis, with their
 * connections cut under load: sessions ended with `pg_terminate_backend` during booking
 * creations, Redis connections ended with `CLIENT KILL`, and Redis gone altogether. No
 * process exits; a request caught by a cut gets `503 storage_unavailable` with a
 * `Retry-After`, never a 500; nothing acknowledged is lost and no slot is booked twice;
 * the instances serve again by themselves; API limits fail open while sign-in throttling
 * keeps counting.
 */
import { Redis } from "ioredis"
import pg from "pg"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { expectProblem, expectStatus, type Reply, seed } from "../http/harness.js"
import { authorizeUrl, csrfOf, formAction, registerClient, UserAgent } from "../oauth/agent.js"
import { PASSWORD } from "../oauth/harness.js"
import { cli } from "../oauth/processes.js"
import { createTestDatabase, type TestDatabase } from "../postgres/database.js"
import { waitFor } from "../webhooks/receiver.js"
import { client, type Instance, killAll, type RedisServer, redisServer, serve } from "./processes.js"

const ADMIN = "outage-admin-token-0123456789"
let db: TestDatabase
let redis: RedisServer
let sql: pg.Client
let a: Instance
let b: Instance

beforeAll(async () => {
  db = await createTestDatabase()
  redis = await redisServer()
  await redis.start()
  sql = new pg.Client({ connectionString: db.url })
  await sql.connect()
  const flags = ["--database", db.url, "--redis", redis.url, "--admin-token", ADMIN]
  ;[a, b] = await Promise.all([serve(flags), serve(flags)])
}, 120_000)

afterAll(async () => {
  killAll()
  await sql?.end()
  await db?.drop()
})

const both = () => [a, b] as const
const alive = () => both().every((i) => i.process.exitCode === null && i.process.signalCode === null)

/** A business account without a practical API limit: its id and sandbox secret key. */
const account = async () => {
  const created = expectStatus(
    await client(a.url, ADMIN).post("/admin/v1/accounts", { name: "Outages", plan: "business", rate_limit_per_minute: 1_000_000 }),
    201
  )
  return { id: created.account.id as string, key: created.keys.sandbox.secret as string }
}

/** Ends every session on the test database but this test's own. */
const terminateSessions = () =>
  // In the select list, the call runs only for the rows the WHERE clause kept.
  sql.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()", [db.name])

/** Weekday 30-minute starts from Monday 2027-03-29, 09:00–16:30 UTC. */
const weekdayStarts = (count: number): Array<string> => {
  const starts: Array<string> = []
  for (let day = 0; starts.length < count; day++) {
    const date = new Date(Date.UTC(2027, 2, 29 + day))
    if (date.getUTCDay() === 0 || date.getUTCDay() === 6) continue
    for (let slot = 0; slot < 16 && starts.length < count; slot++) {
      starts.push(new Date(date.getTime() + (9 * 60 + 30 * slot) * 60_000).toISOString().replace(".000Z", "Z"))
    }
  }
  return starts
}

/** Whether `reply` is the 503 a request caught by a lost connection gets. */
const isUnavailable = (reply: Reply): boolean => {
  if (reply.status !== 503) return false
  expectProblem(reply, 503, "storage_unavailable")
  expect(reply.headers.get("retry-after")).toBe("1")
  return true
}

describe("connections cut under load", () => {
  it(
    "PostgreSQL sessions ended again and again during concurrent bookings: no exit, 503s only, nothing acknowledged lost, no slot twice, service resumes",
    async () => {
      const { id: accountId, key } = await account()
      const setup = await seed(client(a.url, key))
      const base = { service_id: setup.service.id, staff_id: setup.staff.id, client_id: setup.client.id }
      // Every slot is asked for twice, through different instances: one may win, never both.
      const starts = weekdayStarts(160)
      const requests = starts.flatMap((start, i) => [{ start, via: i % 2 }, { start, via: (i + 1) % 2 }])
      const acknowledged: Array<{ id: string; start: string }> = []
      const unexpected: Array<string> = []
      let unavailable = 0
      let next = 0
      let writing = true
      const writer = async () => {
        while (next < requests.length) {
          const { start, via } = requests[next++]!
          try {
            const reply = await client(both()[via]!.url, key).post("/v1/bookings", { ...base, start })
            if (reply.status === 201) acknowledged.push({ id: reply.json.id, start })
            else if (isUnavailable(reply)) unavailable++
            else if (reply.status === 409) expectProblem(reply, 409, "slot_unavailable")
            else unexpected.push(`${reply.status} ${reply.text}`)
          } catch (error) {
            unexpected.push(String(error))
          }
        }
      }
      const writers = Promise.all(Array.from({ length: 8 }, writer)).finally(() => (writing = false))

      // Cut every session, wait for bookings to go through again, cut again.
      let cuts = 0
      while (writing) {
        await terminateSessions()
        cuts++
        const before = acknowledged.length
        await waitFor(() => !writing || acknowledged.length >= before + 5, 60_000, "bookings after a cut")
      }
      await writers

      expect(alive()).toBe(true)
      expect(unexpected).toEqual([])
      expect(cuts).toBeGreaterThanOrEqual(3)
      expect(unavailable).toBeGreaterThan(0)
      expect(acknowledged.length).toBeGreaterThan(0)

      // Both instances serve again: a read and a write each.
      await waitFor(
        async () => {
          const replies = await Promise.all(
            both().flatMap((i) => [
              client(i.url, key).get("/v1/account"),
              client(i.url, key).post("/v1/clients", { name: "After" })
            ])
          )
          return replies.every((r) => r.status === 200 || r.status === 201)
        },
        30_000,
        "both instances serving again"
      )

      // Every acknowledged booking is stored; no start is booked twice.
      const stored = (await sql.query<{ id: string; start_ms: string }>(
        "SELECT id, start_ms FROM c_bookings WHERE account_id = $1 AND status <> 'cancelled'",
        [accountId]
      )).rows
      const storedIds = new Set(stored.map((row) => row.id))
      expect(acknowledged.filter((booking) => !storedIds.has(booking.id))).toEqual([])
      const perStart = new Map<string, number>()
      for (const row of stored) perStart.set(String(row.start_ms), (perStart.get(String(row.start_ms)) ?? 0) + 1)
      expect([...perStart.values()].filter((n) => n > 1)).toEqual([])

      // Each instance LISTENs again for the other's signals.
      await waitFor(
        async () =>
          (await sql.query("SELECT 1 FROM pg_stat_activity WHERE datname = $1 AND query LIKE 'LISTEN %'", [db.name])).rowCount === 2,
        30_000,
        "both LISTEN sessions back"
      )
    },
    300_000
  )

  it("Redis connections killed again and again under load: no exit, every request served, the shared count resumes", async () => {
    const { key } = await account()
    const admin = new Redis(redis.url, { maxRetriesPerRequest: 0 })
    admin.on("error", () => {})
    try {
      const statuses: Array<number> = []
      let reading = true
      const reader = async (n: number) => {
        for (let i = 0; i < 60; i++) {
          const reply = await client(both()[(n + i) % 2]!.url, key).get("/v1/account").catch(() => undefined)
          statuses.push(reply?.status ?? 0)
        }
      }
      const readers = Promise.all(Array.from({ length: 6 }, (_, n) => reader(n))).finally(() => (reading = false))
      let kills = 0
      while (reading) {
        // SKIPME (the default): this connection stays, the instances' go.
        await admin.client("KILL", "TYPE", "normal")
        kills++
        const before = statuses.length
        await waitFor(() => !reading || statuses.length >= before + 10, 60_000, "requests after a kill")
      }
      await readers
      expect(alive()).toBe(true)
      expect(kills).toBeGreaterThanOrEqual(3)
      expect(statuses.filter((s) => s !== 200)).toEqual([])

      // One counter again: a request through B sees the one through A.
      const remaining = (r: Reply) => Number(r.headers.get("x-ratelimit-remaining"))
      await waitFor(
        async () => {
          const x = await client(a.url, key).get("/v1/account")
          const y = await client(b.url, key).get("/v1/account")
          return x.status === 200 && y.status === 200 && remaining(y) < remaining(x)
        },
        30_000,
        "counting in Redis again"
      )
    } finally {
      admin.disconnect()
    }
  }, 300_000)

  it("Redis gone: the API is served unmetered, sign-in is still throttled per process; back again, counting resumes", async () => {
    const created = expectStatus(await client(a.url, ADMIN).post("/admin/v1/accounts", { name: "Sign-in", plan: "pro" }), 201)
    const email = "guessed@example.com"
    const made = await cli(
      [
        "users",
        "create",
        "--database",
        db.url,
        "--account",
        created.account.id,
        "--email",
        email,
        "--role",
        "owner",
        "--password-stdin",
        "--json"
      ],
      `${PASSWORD}\n`
    )
    expect(made.status, made.stderr).toBe(0)
    const site = {
      url: a.url,
      sandbox: client(a.url, created.keys.sandbox.secret),
      production: client(a.url, created.keys.sandbox.secret),
      user: { email }
    }
    const setup = await registerClient(site)
    const attempt = async (password: string) => {
      const agent = new UserAgent(a.url)
      const page = await agent.follow(await agent.request((await authorizeUrl(setup)).url.href))
      const html = await page.response.text()
      return (await agent.request(formAction(html, "Sign in"), { form: { csrf: csrfOf(html), email, password } })).status
    }

    await redis.stop()
    try {
      for (let i = 0; i < 20; i++)
        expect((await client(both()[i % 2]!.url, created.keys.sandbox.secret).get("/v1/account")).status).toBe(200)
      // The per-email limit is 10 a minute: ten wrong guesses, then even the right password waits.
      for (let i = 0; i < 10; i++) expect(await attempt("wrong password guess")).toBe(401)
      expect(await attempt(PASSWORD)).toBe(429)
      expect(alive()).toBe(true)
    } finally {
      await redis.start()
    }
    const remaining = (r: Reply) => Number(r.headers.get("x-ratelimit-remaining"))
    await waitFor(
      async () => {
        const x = await client(a.url, created.keys.sandbox.secret).get("/v1/account")
        const y = await client(b.url, created.keys.sandbox.secret).get("/v1/account")
        return x.status === 200 && y.status === 200 && remaining(y) < remaining(x)
      },
      30_000,
      "counting in Redis again"
    )
  }, 300_000)
})
