/** The API mounted under a prefix: the Node handler in a plain node:http server, the Fetch handler. */
import * as http from "node:http"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createHttpHandler, type SlotwiseHttpHandler } from "../../index.js"
import { client, expectProblem, expectStatus } from "./harness.js"

let slotwise: SlotwiseHttpHandler
let server: http.Server
let base = ""
let key = ""

beforeAll(async () => {
  slotwise = await createHttpHandler({ prefix: "/scheduling" })
  key = (await slotwise.createAccount({ name: "Host", plan: "pro" })).keys.sandbox.secret
  server = http.createServer((req, res) => {
    if (req.url?.startsWith("/scheduling")) return slotwise.node(req, res)
    res.writeHead(200, { "content-type": "text/plain" }).end("host")
  })
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r))
  base = `http://127.0.0.1:${(server.address() as { port: number }).port}`
})
afterAll(async () => {
  await new Promise((r) => server.close(r))
  await slotwise.close()
})

describe("mounted API", () => {
  it("the operator's account methods: handle and branding by updateAccount, getAccount, accountByHandle", async () => {
    const { account } = await slotwise.createAccount({ name: "Mounted Handle Shop", plan: "pro" })
    expect(account.handle).toBe("mounted-handle-shop")
    const updated = await slotwise.updateAccount(account.id, {
      handle: "mounted-renamed",
      branding: { display_name: "Renamed", hide_powered_by: true }
    })
    expect(updated).toMatchObject({ handle: "mounted-renamed", branding: { display_name: "Renamed", hide_powered_by: true } })
    expect((await slotwise.getAccount(account.id)).handle).toBe("mounted-renamed")
    expect((await slotwise.accountByHandle("mounted-renamed"))?.id).toBe(account.id)
    expect(await slotwise.accountByHandle("mounted-handle-shop")).toBeNull()
    const taken = await slotwise.updateAccount(account.id, { handle: "host" }).then(() => undefined, (e: Error) => e)
    expect(taken?.name).toContain("ConflictError")
    expect(taken?.message).toBe("the handle host belongs to another account")
  })

  it("serves /v1 under the prefix in a node:http server, next to the host's routes", async () => {
    const api = client(`${base}/scheduling`, key)
    const created = expectStatus(await api.post("/v1/staff", { name: "Ana", time_zone: "UTC" }), 201)
    expect(expectStatus(await api.get(`/v1/staff/${created.id}`), 200).name).toBe("Ana")
    expectProblem(await api.get("/v1/nothing"), 404, "not_found")
    expectProblem(await client(`${base}/scheduling`).get("/v1/staff"), 401, "unauthorized")
    expect(expectStatus(await client(`${base}/scheduling`).get("/health"), 200).status).toBe("ok")
    expect((await client(base).get("/elsewhere")).text).toBe("host")
  })

  it("the Fetch handler answers Requests with Responses over the same data", async () => {
    const response = await slotwise.fetch(
      new Request("http://app.local/scheduling/v1/staff?limit=5", { headers: { authorization: `Bearer ${key}` } })
    )
    expect(response.status).toBe(200)
    expect(response.headers.get("x-ratelimit-limit")).toBe("600")
    const list = await response.json() as any
    expect(list.data.map((s: any) => s.name)).toContain("Ana")
    const created = await slotwise.fetch(
      new Request("http://app.local/scheduling/v1/clients", {
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
        body: JSON.stringify({ name: "Via fetch" })
      })
    )
    expect(created.status).toBe(201)
    const bad = await slotwise.fetch(
      new Request("http://app.local/scheduling/v1/clients", {
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
        body: "{"
      })
    )
    expect(bad.status).toBe(400)
    expect(bad.headers.get("content-type")).toBe("application/problem+json")
  })
})
