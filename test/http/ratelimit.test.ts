/** Rate limits over HTTP: headers everywhere, 429 at the limit, recovery on a controlled clock. */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { ADMIN_TOKEN, client, expectProblem, expectStatus, type Reply, startServer, type TestServer } from "./harness.js"

let server: TestServer
beforeAll(async () => {
  server = await startServer()
})
afterAll(() => server.close())

const figures = (reply: Reply) => ({
  limit: Number(reply.headers.get("x-ratelimit-limit")),
  remaining: Number(reply.headers.get("x-ratelimit-remaining")),
  reset: Number(reply.headers.get("x-ratelimit-reset")),
  policy: reply.headers.get("ratelimit-policy"),
  ratelimit: reply.headers.get("ratelimit")
})

describe("rate limits", () => {
  it("per credential: headers decrease, 429 with Retry-After at the limit, full again after the reset", async () => {
    const fresh = expectStatus(
      await client(server.url, ADMIN_TOKEN).post("/admin/v1/accounts", { name: "Tiny2", plan: "free", rate_limit_per_minute: 5 }),
      201
    )
    const t = client(server.url, fresh.keys.sandbox.secret)
    const replies = []
    for (let i = 0; i < 6; i++) replies.push(await t.get("/v1/services"))
    expect(replies.slice(0, 5).map((r) => r.status)).toEqual([200, 200, 200, 200, 200])
    expect(replies.slice(0, 5).map((r) => figures(r).remaining)).toEqual([4, 3, 2, 1, 0])
    expect(figures(replies[0]!)).toMatchObject({ limit: 5, reset: 60, policy: "\"custom\";q=5;w=60", ratelimit: "\"custom\";r=4;t=60" })
    const limited = expectProblem(replies[5]!, 429, "rate_limited")
    expect(limited.detail).toContain("5 requests per minute")
    expect(replies[5]!.headers.get("retry-after")).toBe("60")
    expect(figures(replies[5]!).remaining).toBe(0)

    await server.advance(30_000)
    const later = await t.get("/v1/services")
    expectProblem(later, 429, "rate_limited")
    expect(later.headers.get("retry-after")).toBe("30")
    expect(figures(later).reset).toBe(30)

    await server.advance(30_000)
    const recovered = await t.get("/v1/services")
    expect(recovered.status).toBe(200)
    expect(figures(recovered)).toMatchObject({ limit: 5, remaining: 4, reset: 60 })
  })

  it("plans set the limit: free 60, pro 600, business 3000", async () => {
    const admin = client(server.url, ADMIN_TOKEN)
    for (const [plan, limit] of [["free", 60], ["pro", 600], ["business", 3000]] as const) {
      const acct = expectStatus(await admin.post("/admin/v1/accounts", { name: plan, plan }), 201)
      const reply = await client(server.url, acct.keys.sandbox.secret).get("/v1/account")
      expect(figures(reply)).toMatchObject({ limit, remaining: limit - 1, policy: `"${plan}";q=${limit};w=60` })
    }
  })

  it("every response carries the headers: 401, 404, 405, 415, 400, problem or not", async () => {
    const key = server.first.keys.sandbox.secret
    const replies = [
      await client(server.url).get("/v1/bookings"),
      await client(server.url, key).get("/v1/nothing-here"),
      await client(server.url, key).send("PUT", "/v1/bookings"),
      await client(server.url, key).post("/v1/clients", undefined, { raw: "name=x", headers: { "content-type": "text/plain" } }),
      await client(server.url, key).post("/v1/clients", undefined, { raw: "{", headers: { "content-type": "application/json" } }),
      await client(server.url, key).get("/v1/bookings/bkg_missing"),
      await client(server.url).get("/health")
    ]
    expect(replies.map((r) => r.status)).toEqual([401, 404, 405, 415, 400, 404, 200])
    for (const reply of replies) {
      const f = figures(reply)
      expect(f.limit).toBeGreaterThan(0)
      expect(Number.isInteger(f.remaining)).toBe(true)
      expect(f.reset).toBeGreaterThan(0)
      expect(f.policy).toMatch(/^"[a-z]+";q=\d+;w=60$/)
      expect(f.ratelimit).toMatch(/^"[a-z]+";r=\d+;t=\d+$/)
    }
    expect(replies[2]!.headers.get("allow")).toBe("GET, HEAD, POST")
  })

  it("requests without a valid credential are limited per client address, 60 a minute", async () => {
    const own = await startServer()
    try {
      const anonymous = client(own.url)
      const statuses = []
      for (let i = 0; i < 61; i++)
        statuses.push(
          (await anonymous.get("/v1/bookings", { headers: { authorization: `Bearer sk_test_guess${String(i).padStart(27, "0")}` } })).status
        )
      expect(statuses.slice(0, 60).every((s) => s === 401)).toBe(true)
      expect(statuses[60]).toBe(429)
      // A valid key has its own counter.
      expect((await client(own.url, own.first.keys.sandbox.secret).get("/v1/bookings")).status).toBe(200)
      await own.advance(60_000)
      expect((await anonymous.get("/health")).status).toBe(200)
    } finally {
      await own.close()
    }
  })
})
