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
    const operatorFields = expectProblem(
      await api.patch("/v1/account", { plan: "business", rate_limit_per_minute: 100000 }),
      422,
      "validation_failed"
    )
    expect(operatorFields.errors.map((e: { path: string }) => e.path).sort()).toEqual(["plan", "rate_limit_per_minute"])
    const origins = expectProblem(
      await api.patch("/v1/account", { allowed_origins: ["https://ok.example.com", "https://shop.example.com/path", "ftp://x"] }),
      422,
      "validation_failed"
    )
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
    expect(Object.keys(spec.components.schemas.AccountSettingsUpdate.properties).sort()).toEqual([
      "allowed_origins",
      "branding",
      "handle",
      "name",
      "reminders"
    ])
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
    // The former handle stays this account's for 30 days: another account is told so.
    const third = client(server.url, (await newAccount(server)).keys.sandbox.secret)
    const held = expectProblem(await third.patch("/v1/account", { handle: "handle-test-studio-2" }), 409, "handle_taken")
    expect(held.detail).toMatch(
      /^the handle handle-test-studio-2 was released by another account on \S+ and stays that account's until \S+$/
    )
    await server.advance(30 * 24 * 60 * 60 * 1000)
    expect(expectStatus(await third.patch("/v1/account", { handle: "handle-test-studio-2" }), 200).handle).toBe("handle-test-studio-2")
  })

  it("answers 409 handle_taken for another account's handle and 422 naming handle for a bad or reserved one", async () => {
    const owner = await newAccount(server, { name: "Taken Handle Owner" })
    const api = client(server.url, (await newAccount(server)).keys.sandbox.secret)
    const before = expectStatus(await api.get("/v1/account"), 200).handle
    expectProblem(await api.patch("/v1/account", { handle: owner.account.handle }), 409, "handle_taken")
    const operatorLike = [
      "slotwise",
      "slotwise-support",
      "support-slotwise",
      "my-slotwise-team",
      "security",
      "support",
      "billing",
      "abuse",
      "postmaster",
      "administrator",
      "root",
      "signin"
    ]
    for (
      const handle of ["admin", "book", "v1", "ab", "-starts-with-hyphen", "Upper-Case", "a".repeat(41), "under_score", ...operatorLike]
    ) {
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
    expect(expectStatus(await admin.patch(`/admin/v1/accounts/${other.account.id}`, { handle: "operator-moved" }), 200).handle).toBe(
      "operator-moved"
    )
  })
})

describe("the first start's account", () => {
  it("allows the server's own origins and the usual local dev servers' origins", async () => {
    const port = new URL(server.url).port
    const account = expectStatus(await client(server.url, server.first.keys.sandbox.secret).get("/v1/account"), 200)
    expect(account.allowed_origins).toEqual(devOrigins(Number(port)))
    expect(account.allowed_origins).toEqual(
      expect.arrayContaining([`http://localhost:${port}`, `http://127.0.0.1:${port}`, "http://localhost:5173"])
    )
    const widget = await client(server.url, server.first.keys.sandbox.publishable).get("/v1/services", {
      headers: { origin: "http://localhost:5173" }
    })
    expectStatus(widget, 200)
  })
})

describe("branding", () => {
  const config = async (publishable: string) =>
    expectStatus(await client(server.url, publishable).get("/v1/widget/config", { headers: { origin: SHOP } }), 200)

  it("merges partial changes, null clears a field, and GET /v1/account and the widget config show it", async () => {
    const created = await newAccount(server, { plan: "pro", allowed_origins: [SHOP] })
    const api = client(server.url, created.keys.sandbox.secret)
    expect(created.account.branding).toEqual({ display_name: null, logo_url: null, primary_color: null, hide_powered_by: false })
    expectStatus(await api.patch("/v1/account", { branding: { display_name: "Studio Nord", primary_color: "#0a0" } }), 200)
    const merged = expectStatus(
      await api.patch("/v1/account", { branding: { logo_url: "https://cdn.example.com/logo.svg", hide_powered_by: true } }),
      200
    )
    expect(merged.branding).toEqual({
      display_name: "Studio Nord",
      logo_url: "https://cdn.example.com/logo.svg",
      primary_color: "#0a0",
      hide_powered_by: true
    })
    const cleared = expectStatus(await api.patch("/v1/account", { branding: { primary_color: null, hide_powered_by: null } }), 200)
    expect(cleared.branding).toEqual({
      display_name: "Studio Nord",
      logo_url: "https://cdn.example.com/logo.svg",
      primary_color: null,
      hide_powered_by: false
    })
    expect(expectStatus(await api.get("/v1/account"), 200).branding).toEqual(cleared.branding)
    expect(await config(created.keys.sandbox.publishable)).toMatchObject({
      display_name: "Studio Nord",
      logo_url: "https://cdn.example.com/logo.svg",
      primary_color: null,
      powered_by: true
    })
  })

  it("refuses bad values, naming each field under branding", async () => {
    const api = client(server.url, (await newAccount(server, { plan: "pro" })).keys.sandbox.secret)
    const problem = expectProblem(
      await api.patch("/v1/account", {
        branding: {
          display_name: "x".repeat(81),
          logo_url: "http://cdn.example.com/logo.png",
          primary_color: "blue",
          hide_powered_by: "yes"
        }
      }),
      422,
      "validation_failed"
    )
    expect(problem.errors.map((e: { path: string }) => e.path).sort()).toEqual(
      ["branding.display_name", "branding.hide_powered_by", "branding.logo_url", "branding.primary_color"]
    )
    for (
      const logo_url of [
        "https://user:pw@cdn.example.com/logo.png",
        `https://cdn.example.com/${"a".repeat(2000)}`,
        "javascript:alert(1)",
        "/logo.png"
      ]
    ) {
      const bad = expectProblem(await api.patch("/v1/account", { branding: { logo_url } }), 422, "validation_failed")
      expect(bad.errors.map((e: { path: string }) => e.path)).toEqual(["branding.logo_url"])
    }
    expect(expectProblem(await api.patch("/v1/account", { branding: { display_name: "" } }), 422, "validation_failed").errors[0].path).toBe(
      "branding.display_name"
    )
  })

  it("free accounts set the display name, logo and colour but not hide_powered_by; a downgrade keeps the choice without effect", async () => {
    const free = await newAccount(server, { plan: "free" })
    const api = client(server.url, free.keys.sandbox.secret)
    expect(
      expectStatus(await api.patch("/v1/account", { branding: { display_name: "Free Shop", primary_color: "#123456" } }), 200).branding
    )
      .toMatchObject({ display_name: "Free Shop", primary_color: "#123456", hide_powered_by: false })
    const refused = expectProblem(
      await api.patch("/v1/account", { branding: { display_name: "Not Stored", hide_powered_by: true } }),
      403,
      "plan_required"
    )
    expect(refused.detail).toContain("pro or business")
    expect(expectStatus(await api.get("/v1/account"), 200).branding).toMatchObject({ display_name: "Free Shop", hide_powered_by: false })

    const paid = await newAccount(server, { plan: "business", allowed_origins: [SHOP] })
    const paidApi = client(server.url, paid.keys.sandbox.secret)
    expectStatus(await paidApi.patch("/v1/account", { branding: { hide_powered_by: true } }), 200)
    expect((await config(paid.keys.sandbox.publishable)).powered_by).toBe(false)
    const admin = client(server.url, ADMIN_TOKEN)
    expect(expectStatus(await admin.patch(`/admin/v1/accounts/${paid.account.id}`, { plan: "free" }), 200).branding.hide_powered_by).toBe(
      true
    )
    expect(await config(paid.keys.sandbox.publishable)).toMatchObject({ powered_by: true, branding_required: true })
    // Back on a paid plan the kept choice applies again.
    expectStatus(await admin.patch(`/admin/v1/accounts/${paid.account.id}`, { plan: "pro" }), 200)
    expect((await config(paid.keys.sandbox.publishable)).powered_by).toBe(false)
    // The operator may set the plan and the choice in one change.
    const upgraded = expectStatus(
      await admin.patch(`/admin/v1/accounts/${free.account.id}`, { plan: "pro", branding: { hide_powered_by: true } }),
      200
    )
    expect(upgraded).toMatchObject({ plan: "pro", branding: { display_name: "Free Shop", hide_powered_by: true } })
  })
})
