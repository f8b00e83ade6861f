/**
 * PATCH /v1/account: an account changes its own name and allowed origins with `keys:write`;
 * the plan and rate limit stay the operator's; publishable keys and narrower credentials are
 * refused; origins are validated as the operator API validates them; a new origin works for
 * the account's publishable keys at once. And the first start's account allows the local
 * development origins.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { devOrigins } from "../../adapters/http/server.js"
import { ADMIN_TOKEN, client, expectProblem, expectStatus, newAccount, scopedKey, startServer, type TestServer } from "./harness.js"

let server: TestServer
beforeAll(async () => {
  server = await startServer()
})
afterAll(() => server.close())

const SHOP = "https://shop.example.com"

describe("PATCH /v1/account", () => {
  it("changes the name and allowed origins, and the publishable key works from the new origin at once", async () => {
    const created = await newAccount(server, { name: "Before", plan: "pro" })
    const api = client(server.url, created.keys.sandbox.secret)
    const widget = client(server.url, created.keys.sandbox.publishable)
    // Read once so the credential (with its origins) is cached before the change.
    expectProblem(await widget.get("/v1/services", { headers: { origin: SHOP } }), 403, "forbidden")

    const updated = expectStatus(await api.patch("/v1/account", { name: "After", allowed_origins: [SHOP] }), 200)
    expect(updated).toMatchObject({ id: created.account.id, name: "After", plan: "pro", allowed_origins: [SHOP] })
    expect(expectStatus(await api.get("/v1/account"), 200)).toMatchObject({ name: "After", allowed_origins: [SHOP] })
    const fromShop = await widget.get("/v1/services", { headers: { origin: SHOP } })
    expectStatus(fromShop, 200)
    expect(fromShop.headers.get("access-control-allow-origin")).toBe(SHOP)
    // The production environment's keys belong to the same account.
    expect(expectStatus(await client(server.url, created.keys.production.secret).get("/v1/account"), 200).name).toBe("After")
  })

  it("refuses the operator's fields and invalid origins, naming each field", async () => {
    const api = client(server.url, (await newAccount(server, { plan: "free" })).keys.sandbox.secret)
    const operatorFields = expectProblem(await api.patch("/v1/account", { plan: "business", rate_limit_per_minute: 100000 }), 422, "validation_failed")
    expect(operatorFields.errors.map((e: { path: string }) => e.path).sort()).toEqual(["plan", "rate_limit_per_minute"])
    const origins = expectProblem(await api.patch("/v1/account", { allowed_origins: ["https://ok.example.com", "https://shop.example.com/path", "ftp://x"] }), 422, "validation_failed")
    expect(origins.errors.map((e: { path: string }) => e.path).sort()).toEqual(["allowed_origins.1", "allowed_origins.2"])
    expect(expectStatus(await api.get("/v1/account"), 200)).toMatchObject({ plan: "free", allowed_origins: [] })
  })

  it("needs keys:write: publishable keys and narrower secret keys are refused", async () => {
    const created = await newAccount(server)
    const api = client(server.url, created.keys.sandbox.secret)
    const reader = client(server.url, await scopedKey(api, ["services:read"]))
    expectProblem(await reader.patch("/v1/account", { name: "Nope" }), 403, "forbidden")
    expectProblem(await client(server.url, created.keys.sandbox.publishable).patch("/v1/account", { name: "Nope" }), 403, "forbidden")
    expectProblem(await client(server.url).patch("/v1/account", { name: "Nope" }), 401)
    const writer = client(server.url, await scopedKey(api, ["keys:write"]))
    expect(expectStatus(await writer.patch("/v1/account", { name: "Yes" }), 200).name).toBe("Yes")
  })

  it("is in the OpenAPI document with its payload schema and scope", async () => {
    const spec = expectStatus(await client(server.url).get("/v1/openapi.json"), 200)
    const patch = spec.paths["/v1/account"].patch
    expect(patch.description).toContain("keys:write")
    expect(JSON.stringify(patch.requestBody)).toContain("AccountSettingsUpdate")
    expect(Object.keys(spec.components.schemas.AccountSettingsUpdate.properties).sort()).toEqual(["allowed_origins", "branding", "handle", "name"])
    expect(Object.keys(patch.responses)).toEqual(expect.arrayContaining(["403", "409"]))
  })
})

describe("account handles", () => {
  it("every account gets one from its name, GET /v1/account shows it, and PATCH changes it", async () => {
    const first = await newAccount(server, { name: "Handle Test Studio" })
    const second = await newAccount(server, { name: "Handle Test Studio" })
    expect(first.account.handle).toBe("handle-test-studio")
    expect(second.account.handle).toBe("handle-test-studio-2")
    const api = client(server.url, second.keys.production.secret)
    expect(expectStatus(await api.get("/v1/account"), 200).handle).toBe("handle-test-studio-2")

    expect(expectStatus(await api.patch("/v1/account", { handle: "handle-test-renamed" }), 200).handle).toBe("handle-test-renamed")
    expect(expectStatus(await client(server.url, second.keys.sandbox.secret).get("/v1/account"), 200).handle).toBe("handle-test-renamed")
    // The former handle is free for anyone at once.
    const third = client(server.url, (await newAccount(server)).keys.sandbox.secret)
    expect(expectStatus(await third.patch("/v1/account", { handle: "handle-test-studio-2" }), 200).handle).toBe("handle-test-studio-2")
  })

  it("answers 409 handle_taken for another account's handle and 422 naming handle for a bad or reserved one", async () => {
    const owner = await newAccount(server, { name: "Taken Handle Owner" })
    const api = client(server.url, (await newAccount(server)).keys.sandbox.secret)
    const before = expectStatus(await api.get("/v1/account"), 200).handle
    expectProblem(await api.patch("/v1/account", { handle: owner.account.handle }), 409, "handle_taken")
    for (const handle of ["admin", "book", "v1", "ab", "-starts-with-hyphen", "Upper-Case", "a".repeat(41), "under_score"]) {
      const problem = expectProblem(await api.patch("/v1/account", { handle }), 422, "validation_failed")
      expect(problem.errors.map((e: { path: string }) => e.path)).toEqual(["handle"])
    }
    expect(expectStatus(await api.get("/v1/account"), 200).handle).toBe(before)
    // Its own handle again is no conflict.
    expect(expectStatus(await api.patch("/v1/account", { handle: before }), 200).handle).toBe(before)
  })

  it("the operator sets a handle at creation and by update, with the same uniqueness", async () => {
    const admin = client(server.url, ADMIN_TOKEN)
    const created = await newAccount(server, { name: "Whatever", handle: "operator-chosen" })
    expect(created.account.handle).toBe("operator-chosen")
    expectProblem(await admin.post("/admin/v1/accounts", { name: "Other", plan: "free", handle: "operator-chosen" }), 409, "handle_taken")
    const other = await newAccount(server)
    expectProblem(await admin.patch(`/admin/v1/accounts/${other.account.id}`, { handle: "operator-chosen" }), 409, "handle_taken")
    expect(expectStatus(await admin.patch(`/admin/v1/accounts/${other.account.id}`, { handle: "operator-moved" }), 200).handle).toBe("operator-moved")
  })
})

describe("the first start's account", () => {
  it("allows the server's own origins and the usual local dev servers' origins", async () => {
    const port = new URL(server.url).port
    const account = expectStatus(await client(server.url, server.first.keys.sandbox.secret).get("/v1/account"), 200)
    expect(account.allowed_origins).toEqual(devOrigins(Number(port)))
    expect(account.allowed_origins).toEqual(expect.arrayContaining([`http://localhost:${port}`, `http://127.0.0.1:${port}`, "http://localhost:5173"]))
    const widget = await client(server.url, server.first.keys.sandbox.publishable).get("/v1/services", { headers: { origin: "http://localhost:5173" } })
    expectStatus(widget, 200)
  })
})
