/**
 * Leasing webhook deliveries on PostgreSQL (`leaseTransaction` with `FOR UPDATE SKIP
 * LOCKED`): two processes' outboxes (two pools) claiming at once lease every due delivery
 * exactly once, neither waits for a tenant's open write transaction, and a row another
 * transaction holds is skipped rather than waited for.
 */
import { Effect, Layer, ManagedRuntime } from "effect"
import pg from "pg"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { PostgresStorageLive } from "../../adapters/postgres/layer.js"
import { DEFAULT_TENANT, makeFacade, startCore } from "../../library.js"
import { CoreLive } from "../../src/layers.js"
import { type ClaimedDelivery, WebhookOutbox } from "../../src/webhooks/Outbox.js"
import { WebhookPolicy } from "../../src/webhooks/policy.js"
import { createTestDatabase, type TestDatabase } from "./database.js"

let db: TestDatabase
const runtimes: Array<ManagedRuntime.ManagedRuntime<any, any>> = []

const instance = () => {
  const runtime = ManagedRuntime.make(
    CoreLive.pipe(
      Layer.provide(Layer.succeed(WebhookPolicy, { allowPrivate: true })),
      Layer.provide(PostgresStorageLive({ url: db.url }))
    )
  )
  runtimes.push(runtime)
  return runtime
}

beforeAll(async () => {
  db = await createTestDatabase()
}, 30_000)

afterAll(async () => {
  for (const runtime of runtimes) await runtime.dispose()
  await db?.drop()
})

describe("postgres: leasing due deliveries", () => {
  it("two processes claiming together lease each delivery once, past a tenant's open write and a locked row", async () => {
    const one = instance()
    const two = instance()
    const facade = makeFacade(await startCore(one), DEFAULT_TENANT)
    await facade.webhooks.create({ url: "http://127.0.0.1:9/hook", events: ["client.created"] })
    for (let i = 0; i < 60; i++) await facade.clients.create({ name: `c${i}` })
    // Deliveries for every event, due now, leased by nobody yet.
    await one.runPromise(
      Effect.flatMap(WebhookOutbox, (outbox) =>
        Effect.iterate(true, {
          while: (more) => more,
          body: () => Effect.map(outbox.fanOut(), (r) => r.more)
        }))
    )

    const raw = new pg.Client({ connectionString: db.url })
    await raw.connect()
    try {
      // A write transaction of the tenant, left open: it holds the tenant's lock and the
      // global key shared, as every tenant write does. And one due row locked by it.
      await raw.query("BEGIN")
      await raw.query(
        "SELECT pg_advisory_xact_lock_shared(7305358101040177153), pg_advisory_xact_lock(hashtextextended($1, 0))",
        [`${DEFAULT_TENANT.account_id}/${DEFAULT_TENANT.environment}`]
      )
      const locked = (await raw.query("SELECT id FROM c_webhook_queue ORDER BY due_ms, id LIMIT 1 FOR UPDATE")).rows[0].id

      const drain = (runtime: typeof one) =>
        runtime.runPromise(Effect.flatMap(WebhookOutbox, (outbox) =>
          Effect.gen(function*() {
            const mine: Array<ClaimedDelivery> = []
            for (;;) {
              const { claimed } = yield* outbox.claimDue({ max: 7, leaseMs: 600_000 })
              if (claimed.length === 0) return mine
              mine.push(...claimed)
            }
          })))
      const [a, b] = await Promise.all([drain(one), drain(two)])
      const ids = [...a, ...b].map((c) => c.delivery_id)
      expect(new Set(ids).size).toBe(ids.length) // nobody leased a row twice
      expect(ids).toHaveLength(59) // all but the locked row, without waiting for the open transaction
      expect(ids).not.toContain(locked)
      // How the rows split between the two depends on scheduling (on a busy machine one
      // process may drain everything before the other starts), so only the union is asserted.
      await raw.query("COMMIT")
      const rest = await drain(two)
      expect(rest.map((c) => c.delivery_id)).toEqual([locked])
    } finally {
      await raw.end()
    }
  }, 60_000)
})
