/** Account users (operator API and CLI) and OAuth clients' CRUD on /v1. */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Readable } from "node:stream"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { storageLayer } from "../../compose.js"
import { usersCreate } from "../../adapters/oauth/cli.js"
import { client, expectProblem } from "../http/harness.js"
import { obtainTokens, registerClient } from "./agent.js"
import { type OAuthTestServer, PASSWORD, startOAuthServer } from "./harness.js"

let server: OAuthTestServer
let dir: string
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "slotwise-oauth-"))
  server = await startOAuthServer({ storage: { sqlite: join(dir, "db.sqlite") } })
})
afterAll(async () => {
  await server.close()
  rmSync(dir, { recursive: true, force: true })
})

const accountId = () => server.account.account.id
const bearer = (token: string) => fetch(`${server.url}/v1/services`, { headers: { authorization: `Bearer ${token}` } })

describe("the operator's user routes", () => {
  it("create a user without ever returning the password, and refuse a duplicate email in any case", async () => {
    const created = await server.admin.post(`/admin/v1/accounts/${accountId()}/users`, {
      email: "member@example.com",
      name: "Max Member",
      password: "a long enough passphrase"
    })
    expect(created.status).toBe(201)
    expect(created.json).toMatchObject({ object: "user", email: "member@example.com", role: "member", account_id: accountId() })
    expect(created.text).not.toContain("passphrase")
    expect(created.text).not.toContain("scrypt")
    expectProblem(
      await server.admin.post(`/admin/v1/accounts/${accountId()}/users`, {
        email: "MEMBER@example.com",
        name: "Again",
        password: "a long enough passphrase"
      }),
      422,
      "validation_failed"
    )
    const listed = await server.admin.get(`/admin/v1/accounts/${accountId()}/users`)
    expect(listed.json.data.map((u: { email: string }) => u.email)).toContain("member@example.com")
    expect((await server.admin.get(`/admin/v1/accounts/${accountId()}/users/${created.json.id}`)).json.id).toBe(created.json.id)
  })

  it("validate the input and hide the routes without the operator token", async () => {
    const short = expectProblem(
      await server.admin.post(`/admin/v1/accounts/${accountId()}/users`, { email: "x@example.com", name: "X", password: "short" }),
      422
    )
    expect(short.errors[0].path).toBe("password")
    expectProblem(
      await server.admin.post("/admin/v1/accounts/acc_01JZZZZZZZZZZZZZZZZZZZZZZZ/users", {
        email: "x@example.com",
        name: "X",
        password: PASSWORD
      }),
      404
    )
    expectProblem(await server.sandbox.get(`/admin/v1/accounts/${accountId()}/users`), 404)
  })

  it("delete a user with every grant they gave: their tokens stop working", async () => {
    const created = await server.admin.post(`/admin/v1/accounts/${accountId()}/users`, {
      email: "leaver@example.com",
      name: "Lee",
      password: PASSWORD
    })
    const setup = await registerClient(server)
    const { tokens } = await obtainTokens(server, setup, { email: "leaver@example.com" })
    expect((await bearer(tokens.access_token)).status).toBe(200)
    expect((await server.admin.del(`/admin/v1/accounts/${accountId()}/users/${created.json.id}`)).status).toBe(200)
    expect((await bearer(tokens.access_token)).status).toBe(401)
    expectProblem(await server.admin.get(`/admin/v1/accounts/${accountId()}/users/${created.json.id}`), 404)
  })
})

describe("slotwise users create", () => {
  const run = async (args: ReadonlyArray<string>, stdin = "") => {
    let out = ""
    let err = ""
    const code = await usersCreate(args, {
      storage: (database) => ({ layer: storageLayer({ sqlite: database! }), name: `SQLite database ${database}` }),
      stdin: Readable.from([stdin]),
      out: (t) => (out += t),
      err: (t) => (err += t)
    })
    return { code, out, err }
  }

  it("reads the password from standard input only, and the user can sign in", async () => {
    const database = join(dir, "db.sqlite")
    const argv = await run(["--database", database, "--account", accountId(), "--email", "cli@example.com", "--password", PASSWORD])
    expect(argv.code).toBe(2)
    const noStdin = await run(["--database", database, "--account", accountId(), "--email", "cli@example.com"])
    expect(noStdin.code).toBe(2)
    expect(noStdin.err).toContain("--password-stdin")
    const ok = await run([
      "--database",
      database,
      "--account",
      accountId(),
      "--email",
      "cli@example.com",
      "--role",
      "owner",
      "--password-stdin",
      "--json"
    ], `${PASSWORD}\n`)
    expect(ok.err).toBe("")
    expect(ok.code).toBe(0)
    expect(JSON.parse(ok.out)).toMatchObject({ object: "user", email: "cli@example.com", role: "owner" })
    const setup = await registerClient(server)
    const { tokens } = await obtainTokens(server, setup, { email: "cli@example.com" })
    expect((await bearer(tokens.access_token)).status).toBe(200)
    const again = await run(["--database", database, "--account", accountId(), "--email", "CLI@example.com", "--password-stdin"], PASSWORD)
    expect(again.code).toBe(1)
  })
})

describe("/v1/oauth-clients", () => {
  it("shows a confidential client's secret once and stores it only hashed", async () => {
    const created = await server.sandbox.post("/v1/oauth-clients", {
      name: "Sync",
      type: "confidential",
      redirect_uris: ["https://app.example.com/cb"]
    })
    expect(created.status).toBe(201)
    expect(created.json).toMatchObject({ object: "oauth_client", environment: "sandbox", type: "confidential" })
    expect(created.json.client_id).toBe(created.json.id)
    const secret: string = created.json.client_secret
    const read = await server.sandbox.get(`/v1/oauth-clients/${created.json.id}`)
    expect(read.text).not.toContain(secret)
    expect(read.json.secret_hash).toBeUndefined()
    const listed = await server.sandbox.get("/v1/oauth-clients")
    expect(listed.text).not.toContain(secret)
    // Each environment sees only its own clients.
    expectProblem(await server.production.get(`/v1/oauth-clients/${created.json.id}`), 404)
  })

  it("matches redirect URIs exactly: https, or http only for loopback; no fragments", async () => {
    for (const uri of ["http://app.example.com/cb", "https://app.example.com/cb#x", "javascript:alert(1)", "/relative"]) {
      const reply = await server.sandbox.post("/v1/oauth-clients", { name: "Bad", type: "public", redirect_uris: [uri] })
      expectProblem(reply, 422, "validation_failed")
    }
    for (const uri of ["http://127.0.0.1:8765/cb", "http://[::1]/cb", "http://localhost:3000/cb", "com.example.app:/cb"]) {
      const reply = await server.sandbox.post("/v1/oauth-clients", { name: "Good", type: "public", redirect_uris: [uri] })
      expect(reply.status).toBe(201)
    }
  })

  it("updates, refuses to rotate a public client's secret, and deletes a client with its tokens", async () => {
    const setup = await registerClient(server, { type: "public" })
    const updated = await server.sandbox.patch(`/v1/oauth-clients/${setup.id}`, { name: "Renamed" })
    expect(updated.json.name).toBe("Renamed")
    expectProblem(await server.sandbox.post(`/v1/oauth-clients/${setup.id}/rotate-secret`, {}), 422)
    const { tokens } = await obtainTokens(server, setup)
    expect((await bearer(tokens.access_token)).status).toBe(200)
    expect((await server.sandbox.del(`/v1/oauth-clients/${setup.id}`)).status).toBe(200)
    expect((await bearer(tokens.access_token)).status).toBe(401)
  })

  it("need keys:write", async () => {
    const key = await server.sandbox.post("/v1/api-keys", { name: "reader", type: "secret", scopes: ["services:read"] })
    const reader = client(server.url, key.json.secret)
    expectProblem(await reader.get("/v1/oauth-clients"), 403, "forbidden")
    expectProblem(await reader.get("/v1/oauth-grants"), 403, "forbidden")
  })
})
