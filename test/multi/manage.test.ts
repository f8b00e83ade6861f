/**
 * Manage links across two `slotwise serve` processes on one PostgreSQL database and one
 * Redis: one deployment secret for both, a link made by one opens on the other, a rotation
 * on one kills the old link on both at once, and a booking's write limit is counted once.
 */
import pg from "pg"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { expectProblem, expectStatus, MONDAY_9, seed } from "../http/harness.js"
import { createTestDatabase, type TestDatabase } from "../postgres/database.js"
import { client, type Instance, killAll, type RedisServer, redisServer, serve } from "./processes.js"

const ADMIN = "manage-admin-token-0123456789"
const PUBLIC = "https://book.example.com"
let db: TestDatabase
let redis: RedisServer
let a: Instance
let b: Instance
/** Everything both processes wrote to stderr (their stdout lines are in `lines`). */
let stderr = ""

beforeAll(async () => {
  db = await createTestDatabase()
  redis = await redisServer()
  await redis.start()
  const flags = ["--database", db.url, "--redis", redis.url, "--admin-token", ADMIN] // One names the public URL by flag, the other by its variable: both must agree.
  ;[a, b] = await Promise.all([serve([...flags, "--public-url", PUBLIC]), serve(flags, { SLOTWISE_PUBLIC_URL: `${PUBLIC}/` })])
  for (const instance of [a, b]) instance.process.stderr!.on("data", (d) => (stderr += String(d)))
}, 120_000)

afterAll(async () => {
  killAll()
  await redis?.stop()
  await db?.drop()
})

const at = (minutes: number) => new Date(Date.parse(MONDAY_9) + minutes * 60_000).toISOString().replace(".000Z", "Z")

describe("manage links on two instances", () => {
  it("a link from one opens on the other; a rotation on either kills it on both; writes are counted across both", async () => {
    const key =
      expectStatus(await client(a.url, ADMIN).post("/admin/v1/accounts", { name: "Manage", plan: "pro" }), 201).keys.sandbox.secret
    const onA = client(a.url, key)
    const setup = await seed(onA)
    const booking = expectStatus(
      await onA.post("/v1/bookings", { service_id: setup.service.id, staff_id: setup.staff.id, client_id: setup.client.id, start: at(0) }),
      201
    )
    expect(booking.manage_url.startsWith(`${PUBLIC}/manage/`)).toBe(true)
    // Made on B, the same link: both instances sign with the one stored secret.
    expect(expectStatus(await client(b.url, key).get(`/v1/bookings/${booking.id}`), 200).manage_url).toBe(booking.manage_url)
    const token = booking.manage_url.split("/manage/")[1]

    expect(expectStatus(await client(b.url).get(`/v1/manage/${token}`), 200).id).toBe(booking.id)

    const rotated = expectStatus(await client(b.url, key).post(`/v1/bookings/${booking.id}/manage-link/rotate`), 200)
    for (const url of [a.url, b.url]) expectProblem(await client(url).get(`/v1/manage/${token}`), 404, "not_found")
    const fresh = rotated.manage_url.split("/manage/")[1]
    expect(rotated.manage_version).toBe(2)
    expect(expectStatus(await client(a.url).get(`/v1/manage/${fresh}`), 200).id).toBe(booking.id)

    // Ten writes spread over both instances use up the booking's hour.
    for (let i = 0; i < 10; i++) {
      const instance = i % 2 === 0 ? a : b
      expectStatus(await client(instance.url).post(`/v1/manage/${fresh}/reschedule`, { start: at(i % 2 === 0 ? 30 : 0) }), 200)
    }
    for (const url of [a.url, b.url]) {
      const refused = await client(url).post(`/v1/manage/${fresh}/cancel`, {})
      expectProblem(refused, 429, "rate_limited")
      expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0)
    }
  }, 60_000)

  it("the deployment secret both signed with is in no log line of either process and no event", async () => {
    const database = new pg.Client({ connectionString: db.url })
    await database.connect()
    try {
      const secrets = (await database.query("SELECT doc FROM c_deployment_secrets")).rows
        .map((row) => (typeof row.doc === "string" ? JSON.parse(row.doc) : row.doc).secret as string)
      expect(secrets.length).toBeGreaterThan(0)
      const events = (await database.query("SELECT doc::text AS text FROM events")).rows.map((row) => row.text as string)
      expect(events.length).toBeGreaterThan(0)
      const output = [...a.lines, ...b.lines, stderr].join("\n")
      for (const secret of secrets) {
        expect(secret.length).toBeGreaterThanOrEqual(32)
        expect(output).not.toContain(secret)
        for (const event of events) expect(event).not.toContain(secret)
      }
    } finally {
      await database.end()
    }
  })
})
