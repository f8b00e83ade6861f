/**
 * The library on PostgreSQL: `createScheduling({ storage: { postgres } })` instances share
 * one database, and `createHttpHandler` handlers on PostgreSQL with a Redis rate-limit store
 * (under this run's own key prefix, deleted at the end) count a key's requests in one place.
 */
import { randomBytes } from "node:crypto"
import { Redis } from "ioredis"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createHttpHandler, createScheduling, RedisRateLimitStoreLive } from "../../index.js"
import { createTestDatabase, type TestDatabase } from "../postgres/database.js"

const REDIS_URL = process.env.SLOTWISE_TEST_REDIS_URL ?? "redis://127.0.0.1:6379"
const ADMIN = "library-admin-token-0123456789"
let db: TestDatabase

beforeAll(async () => {
  db = await createTestDatabase()
}, 30_000)
afterAll(async () => {
  await db?.drop()
})

describe("the library on PostgreSQL", () => {
  it("two createScheduling instances on one database see each other's writes", async () => {
    const one = await createScheduling({ storage: { postgres: db.url } })
    const two = await createScheduling({ storage: { postgres: db.url } })
    try {
      const ana = await one.staff.create({ name: "Ana", time_zone: "Europe/Berlin" })
      expect((await two.staff.get(ana.id)).name).toBe("Ana")
    } finally {
      await one.close()
      await two.close()
    }
  }, 60_000)

  it("createHttpHandler with postgres and redis: two handlers share one rate-limit counter", async () => {
    const prefix = `slotwise-test-${randomBytes(6).toString("hex")}:`
    const redis = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1 })
    await redis.connect()
    const handlers = await Promise.all([0, 1].map(() =>
      createHttpHandler({
        storage: { postgres: db.url },
        rateLimitStore: RedisRateLimitStoreLive({ url: REDIS_URL, prefix }),
        adminToken: ADMIN,
        webhooks: false
      })
    ))
    try {
      const created = await handlers[0]!.fetch(
        new Request("http://x/admin/v1/accounts", {
          method: "POST",
          headers: { authorization: `Bearer ${ADMIN}`, "content-type": "application/json" },
          body: JSON.stringify({ name: prefix, plan: "free" })
        })
      )
      expect(created.status).toBe(201)
      const key = (await created.json()).keys.sandbox.secret as string
      const remaining: Array<number> = []
      for (let i = 0; i < 4; i++) {
        const reply = await handlers[i % 2]!.fetch(new Request("http://x/v1/account", { headers: { authorization: `Bearer ${key}` } }))
        expect(reply.status).toBe(200)
        remaining.push(Number(reply.headers.get("x-ratelimit-remaining")))
      }
      expect(remaining).toEqual([59, 58, 57, 56])
    } finally {
      for (const handler of handlers) await handler.close()
      const keys = await redis.keys(`${prefix}*`)
      if (keys.length > 0) await redis.del(...keys)
      redis.disconnect()
    }
  }, 60_000)
})
