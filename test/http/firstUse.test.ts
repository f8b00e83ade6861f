/**
 * What a new user meets in the first minutes with the API: a refused key is called an API
 * key (an OAuth token an access token), a staff member needs a time zone rather than getting
 * UTC unasked, and a browser showing a hosted page finds an icon at /favicon.ico, on the
 * server's host and on any other (a custom domain).
 */
import * as http from "node:http"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { client, type Client, expectProblem, expectStatus, startServer, type TestServer } from "./harness.js"

let server: TestServer
let api: Client

beforeAll(async () => {
  server = await startServer()
  api = client(server.url, server.first.keys.sandbox.secret)
})
afterAll(() => server.close())

/** A GET with its body as bytes and the Host header given (a custom domain's requests). */
const getBytes = (path: string, headers: Record<string, string> = {}) =>
  new Promise<{ status: number; headers: http.IncomingHttpHeaders; body: Buffer }>((resolve, reject) => {
    const req = http.get(`${server.url}${path}`, { headers }, (res) => {
      const chunks: Array<Buffer> = []
      res.on("data", (c: Buffer) => chunks.push(c))
      res.on("end", () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) }))
      res.on("error", reject)
    })
    req.on("error", reject)
  })

describe("a refused credential is named for what it is", () => {
  it("a mistyped or truncated sk_/pk_ key is an API key, an unknown one too; anything else an access token; the code stays unauthorized", async () => {
    const secret = server.first.keys.sandbox.secret
    const cases: Array<[string, RegExp]> = [
      [secret.slice(0, 20), /API key is not well formed/],
      [`${secret}x`, /API key is unknown or revoked/],
      [`pk_test_${"A".repeat(32)}`, /API key is unknown or revoked/],
      ["sk_live_abc-def", /API key is not well formed/]
    ]
    for (const [key, detail] of cases) {
      const problem = expectProblem(await client(server.url, key).get("/v1/staff"), 401, "unauthorized")
      expect(problem.detail, key).toMatch(detail)
      expect(problem.detail, key).not.toContain("access token")
      expect(problem.detail, key).not.toContain(key)
    }
    const token = expectProblem(await client(server.url, "not-a-key-at-all").get("/v1/staff"), 401, "unauthorized")
    expect(token.detail).toContain("access token")
  })
})

describe("a staff member's time zone", () => {
  it("is required on create: 422 naming time_zone, nothing created; given, it is kept", async () => {
    const before = expectStatus(await api.get("/v1/staff?limit=100"), 200).data.length
    const problem = expectProblem(await api.post("/v1/staff", { name: "Zed" }), 422, "validation_failed")
    expect(problem.errors.map((e: { path: string }) => e.path)).toEqual(["time_zone"])
    expect(expectStatus(await api.get("/v1/staff?limit=100"), 200).data).toHaveLength(before)
    expect(expectStatus(await api.post("/v1/staff", { name: "Zed", time_zone: "Asia/Tokyo" }), 201).time_zone).toBe("Asia/Tokyo")
  })
})

describe("/favicon.ico", () => {
  it("is an icon with caching headers, on the server's host and on a custom domain; revalidated with 304", async () => {
    for (const headers of [{}, { host: "book.salon.example" }]) {
      const icon = await getBytes("/favicon.ico", headers)
      expect(icon.status).toBe(200)
      expect(icon.headers["content-type"]).toBe("image/x-icon")
      expect(icon.headers["cache-control"]).toMatch(/max-age=\d+/)
      // An ICO file: reserved 0, type 1 (icon).
      expect([...icon.body.subarray(0, 4)]).toEqual([0, 0, 1, 0])
      const again = await getBytes("/favicon.ico", { ...headers, "if-none-match": String(icon.headers.etag) })
      expect(again.status).toBe(304)
    }
  })
})
