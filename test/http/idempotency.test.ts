/** Idempotency-Key over HTTP: replay, mismatch, concurrent use, scope and expiry. */
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { client, type Client, expectProblem, expectStatus, MONDAY_9, seed, startServer, type TestServer } from "./harness.js"

let server: TestServer
let api: Client
beforeAll(async () => {
  server = await startServer()
  api = client(server.url, server.first.keys.sandbox.secret)
})
afterAll(() => server.close())

const withKey = (key: string) => ({ headers: { "idempotency-key": key } })

describe("Idempotency-Key", () => {
  it("a repeat replays the first response (status, body, Idempotent-Replayed) and does nothing again", async () => {
    const first = await api.post("/v1/clients", { name: "Once" }, withKey("create-once"))
    expect(first.status).toBe(201)
    expect(first.headers.get("idempotent-replayed")).toBeNull()
    const again = await api.post("/v1/clients", { name: "Once" }, withKey("\"create-once\""))
    expect(again.status).toBe(201)
    expect(again.text).toBe(first.text)
    expect(again.headers.get("idempotent-replayed")).toBe("true")
    expect(again.headers.get("content-type")).toBe(first.headers.get("content-type"))
    expect(again.headers.get("x-ratelimit-remaining")).not.toBeNull()
    const all = expectStatus(await api.get("/v1/clients?limit=100"), 200)
    expect(all.data.filter((c: any) => c.name === "Once")).toHaveLength(1)
    // Key order and whitespace do not make another request.
    const reordered = await api.post("/v1/clients", undefined, {
      raw: "{ \"name\" : \"Once\" }",
      headers: { "content-type": "application/json", "idempotency-key": "create-once" }
    })
    expect(reordered.headers.get("idempotent-replayed")).toBe("true")
  })

  it("errors are replayed too", async () => {
    const s = await seed(api)
    expectStatus(
      await api.post("/v1/bookings", { service_id: s.service.id, staff_id: s.staff.id, client_id: s.client.id, start: MONDAY_9 }),
      201
    )
    const body = { service_id: s.service.id, staff_id: s.staff.id, client_id: s.client.id, start: MONDAY_9 }
    const first = expectProblem(await api.post("/v1/bookings", body, withKey("taken")), 409, "slot_unavailable")
    const again = await api.post("/v1/bookings", body, withKey("taken"))
    expect(again.headers.get("idempotent-replayed")).toBe("true")
    expect(expectProblem(again, 409, "slot_unavailable")).toEqual(first)
  })

  it("the same key with another body is 422 idempotency_mismatch", async () => {
    expectStatus(await api.post("/v1/clients", { name: "First" }, withKey("reused")), 201)
    expectProblem(await api.post("/v1/clients", { name: "Second" }, withKey("reused")), 422, "idempotency_mismatch")
    expectProblem(await api.post("/v1/staff", { name: "First", time_zone: "UTC" }, withKey("reused")), 422, "idempotency_mismatch")
  })

  it("concurrent requests with one key: one runs, the others are 409 idempotency_conflict or replays", async () => {
    const s = await seed(api)
    const body = { service_id: s.service.id, staff_id: s.staff.id, client_id: s.client.id, start: "2027-03-30T14:00:00Z" }
    // Open the connections first, so the 20 requests reach the server together.
    await Promise.all(Array.from({ length: 20 }, () => api.get("/health")))
    const replies = await Promise.all(Array.from({ length: 20 }, () => api.post("/v1/bookings", body, withKey("concurrent"))))
    const ran = replies.filter((r) => r.status === 201 && r.headers.get("idempotent-replayed") === null)
    const conflicts = replies.filter((r) => r.status === 409)
    expect(ran).toHaveLength(1)
    expect(conflicts.length).toBeGreaterThan(0)
    for (const c of conflicts) expectProblem(c, 409, "idempotency_conflict")
    for (const r of replies.filter((r) => r.status === 201)) expect(r.text).toBe(ran[0]!.text)
    const list = expectStatus(await api.get(`/v1/bookings?staff_id=${s.staff.id}&limit=100`), 200)
    expect(list.data.filter((b: any) => b.start === "2027-03-30T14:00:00Z")).toHaveLength(1)
  })

  it("keys are scoped to account and environment, last 24 hours, and must be well-formed", async () => {
    expectStatus(await api.post("/v1/clients", { name: "Scoped" }, withKey("scoped")), 201)
    const live = expectStatus(await api.post("/v1/api-keys/exchange"), 201)
    const production = await client(server.url, live.secret).post("/v1/clients", { name: "Scoped" }, withKey("scoped"))
    expect(production.status).toBe(201)
    expect(production.headers.get("idempotent-replayed")).toBeNull()

    await server.advance(24 * 3_600_000 + 1000)
    const expired = await api.post("/v1/clients", { name: "Other body" }, withKey("scoped"))
    expect(expired.status).toBe(201)
    expect(expired.headers.get("idempotent-replayed")).toBeNull()

    expectProblem(await api.post("/v1/clients", { name: "x" }, withKey("k".repeat(256))), 400, "bad_request")
    expectProblem(await api.post("/v1/clients", { name: "x" }, withKey("")), 400, "bad_request")
  })
})

describe("Idempotency-Key on responses that carry a secret", () => {
  it("never stores the secret: a repeat says the first request succeeded and names what it made", async () => {
    const dir = mkdtempSync(join(tmpdir(), "slotwise-idem-secret-"))
    const file = join(dir, "secrets.db")
    const local = await startServer({ storage: { sqlite: file } })
    try {
      const owner = client(local.url, local.first.keys.sandbox.secret)
      const first = expectStatus(await owner.post("/v1/api-keys", { name: "ci", type: "secret" }, withKey("new-key")), 201)
      expect(first.secret).toMatch(/^sk_test_/)
      const again = await owner.post("/v1/api-keys", { name: "ci", type: "secret" }, withKey("new-key"))
      const problem = expectProblem(again, 409, "idempotency_secret_withheld")
      expect(problem.detail).toContain(first.id)
      expect(again.headers.get("idempotent-replayed")).toBe("true")
      const keys = expectStatus(await owner.get("/v1/api-keys?limit=100"), 200)
      expect(keys.data.filter((k: any) => k.name === "ci")).toHaveLength(1)
      // The new secret still works, and it is nowhere in the database or its WAL.
      expectStatus(await client(local.url, first.secret).get("/v1/api-keys"), 200)
      const hook = expectStatus(
        await owner.post("/v1/webhooks", { url: "https://hooks.example.com/in", events: ["*"] }, withKey("new-hook")),
        201
      )
      expectProblem(
        await owner.post("/v1/webhooks", { url: "https://hooks.example.com/in", events: ["*"] }, withKey("new-hook")),
        409,
        "idempotency_secret_withheld"
      )
      expect(hook.secret).toMatch(/^whsec_/)
      const stored = ["", "-wal"].map((suffix) => existsSync(file + suffix) ? readFileSync(file + suffix).toString("latin1") : "").join("")
      expect(stored).not.toContain(first.secret)
      expect(stored).not.toContain(first.secret.slice(8))
    } finally {
      await local.close()
      rmSync(dir, { recursive: true, force: true })
    }
  })
})
