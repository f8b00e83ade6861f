/**
 * Instances started at the same moment on a fresh PostgreSQL database, round after round:
 * every one comes up (migrations under the advisory lock, one first account, the webhook
 * dispatcher's first rounds) and serves its first authenticated requests, which prepare
 * tables made on first use (idempotency keys, webhooks, accounts) from all of them at once.
 */
import { afterAll, describe, expect, it } from "vitest"
import { expectStatus } from "../http/harness.js"
import { createTestDatabase, type TestDatabase } from "../postgres/database.js"
import { client, killAll, serve, stop } from "./processes.js"

const ROUNDS = 20
const INSTANCES = 3
const ADMIN = "startup-admin-token-0123456789"
const flags = (database: string) => ["--database", database, "--admin-token", ADMIN, "--allow-private-webhooks"]

afterAll(() => killAll())

const sandboxSecret = (lines: ReadonlyArray<string>): string | undefined =>
  lines.map((line) => /sandbox secret key\s+(sk_test_\w+)/.exec(line)?.[1]).find((key) => key !== undefined)

/** One round: the instances started at once on `db`, each serving its first requests, then stopped. */
const startTogether = async (db: TestDatabase, round: number) => {
  const started = await Promise.allSettled(Array.from({ length: INSTANCES }, () => serve(flags(db.url))))
  const instances = started.flatMap((s) => (s.status === "fulfilled" ? [s.value] : []))
  try {
    const failed = started.flatMap((s) => (s.status === "rejected" ? [String(s.reason)] : []))
    expect(failed, `round ${round}: instances that did not come up`).toEqual([])
    const keys = instances.map((i) => sandboxSecret(i.lines)).filter((key) => key !== undefined)
    expect(keys, `round ${round}: one first account`).toHaveLength(1)
    await Promise.all(instances.map(async (instance, n) => {
      const api = client(instance.url, keys[0])
      expect((await api.get("/v1/account")).status, `round ${round}, instance ${n}: first read`).toBe(200)
      const headers = { "idempotency-key": `first-${n}` }
      expectStatus(await api.post("/v1/clients", { name: `r${round}-${n}` }, { headers }), 201)
      expectStatus(await api.post("/v1/webhooks", { url: "http://127.0.0.1:9/hook", events: ["client.created"] }), 201)
      expectStatus(await client(instance.url, ADMIN).post("/admin/v1/accounts", { name: `r${round}-${n}`, plan: "pro" }), 201)
    }))
  } finally {
    await Promise.all(instances.map(stop))
  }
}

describe("instances started together on a fresh database", () => {
  it(`${ROUNDS} rounds of ${INSTANCES}: each comes up and serves its first authenticated reads and writes`, async () => {
    // The next round's database is made while this round runs, and each is dropped in the
    // background: the rounds' time is the instances' start-up, not the databases'.
    let next: Promise<TestDatabase> | undefined = createTestDatabase()
    const drops: Array<Promise<void>> = []
    try {
      for (let round = 0; round < ROUNDS; round++) {
        const db: TestDatabase = await next!
        next = round + 1 < ROUNDS ? createTestDatabase() : undefined
        try {
          await startTogether(db, round)
        } finally {
          drops.push(db.drop())
        }
      }
    } finally {
      if (next !== undefined) drops.push(next.then((db) => db.drop()))
      await Promise.all(drops)
    }
  }, 600_000)
})
