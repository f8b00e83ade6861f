/**
 * The binary: two server processes on one SQLite file racing for one seat, first-start keys,
 * `accounts create | list | update`, `users create`, the storage every command opens and
 * names, `--help` for each command, environment variables, start-up and shutdown logs, `GET /`,
 * and graceful shutdown on SIGTERM.
 *
 * Nearly all of the time here is processes starting, so the tests run side by side, each
 * with its own files, and commands that do not depend on each other run at once.
 */
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createTestDatabase } from "../postgres/database.js"
import { binary, client, expectProblem, expectStatus, killServers, seed, serveProcess } from "./harness.js"

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "slotwise-http-processes-"))
// Bundling the binary is shared by the tests (and other files): done once, before them.
beforeAll(() => binary().then(() => undefined), 120_000)
afterAll(() => {
  killServers()
  fs.rmSync(dir, { recursive: true, force: true })
})

const serve = (args: ReadonlyArray<string>) => serveProcess(args, { SLOTWISE_ADMIN_TOKEN: "admin-secret" })

interface Run {
  readonly status: number | null
  readonly stdout: string
  readonly stderr: string
}

/**
 * The binary run to completion with standard input, in `cwd` (default: a directory of its
 * own, so a default ./slotwise.db would land there), without the storage and admin token
 * variables unless `env` gives them.
 */
const run = async (args: ReadonlyArray<string>, env: Record<string, string> = {}, input = "", cwd = inDir): Promise<Run> => {
  const child = spawn(process.execPath, [await binary(), ...args], {
    cwd,
    env: { ...process.env, SLOTWISE_DATABASE_URL: "", SLOTWISE_ADMIN_TOKEN: "", ...env }
  })
  let stdout = ""
  let stderr = ""
  child.stdout.setEncoding("utf8").on("data", (d: string) => (stdout += d))
  child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d))
  child.stdin.end(input)
  return new Promise((resolve, reject) => {
    child.once("error", reject)
    child.once("close", (status) => resolve({ status, stdout, stderr }))
  })
}
const inDir = fs.mkdtempSync(path.join(dir, "cwd-"))
const cli = (args: ReadonlyArray<string>) => run(args, {}, "", fs.mkdtempSync(path.join(dir, "cli-")))

// Every test starts processes: their start-up, not the work, is what a busy machine stretches.
describe("slotwise serve", { timeout: 90_000, concurrent: true }, () => {
  it("two processes on one SQLite file: 50 concurrent creates for one seat → exactly one 201, the rest 409 slot_unavailable", async () => {
    const file = path.join(dir, "shared.db")
    const one = await serve(["--database", file])
    const sandbox = one.lines.find((l) => l.includes("sandbox secret key"))?.match(/sk_test_\w+/)?.[0]
    expect(sandbox).toBeDefined()
    expect(one.lines.some((l) => /pk_test_\w+/.test(l))).toBe(true)
    const two = await serve(["--database", file])
    expect(two.lines.some((l) => l.includes("sk_test_"))).toBe(false) // keys are printed once, on first start

    const admin = client(one.url, "admin-secret")
    const acct = expectStatus(await admin.post("/admin/v1/accounts", { name: "Race", plan: "business" }), 201)
    const key = acct.keys.sandbox.secret
    const s = await seed(client(one.url, key))
    const body = { service_id: s.service.id, staff_id: s.staff.id, client_id: s.client.id, start: "2027-03-29T09:00:00Z" }
    const replies = await Promise.all(
      Array.from({ length: 50 }, (_, i) => client(i % 2 === 0 ? one.url : two.url, key).post("/v1/bookings", body))
    )
    const statuses = replies.map((r) => r.status)
    expect(statuses.filter((s) => s === 201)).toHaveLength(1)
    for (const r of replies.filter((r) => r.status !== 201)) expectProblem(r, 409, "slot_unavailable")
    // Both processes see the one booking.
    for (const url of [one.url, two.url]) {
      const list = expectStatus(await client(url, key).get(`/v1/bookings?staff_id=${s.staff.id}`), 200)
      expect(list.data).toHaveLength(1)
    }

    // Graceful shutdown: requests sent before SIGTERM complete; then the process exits 0.
    let handedOver = 0
    let allSent!: () => void
    const sent = new Promise<void>((resolve) => (allSent = resolve))
    const inFlight = Array.from(
      { length: 10 },
      () =>
        client(two.url, key).get(`/v1/availability/slots?service_id=${s.service.id}&start=2027-03-29T00:00:00Z&end=2027-05-29T00:00:00Z`, {
          sent: () => ++handedOver === 10 && allSent()
        })
    )
    // SIGTERM once every request is on its way (not after a guessed pause).
    await sent
    two.process.kill("SIGTERM")
    const finished = await Promise.allSettled(inFlight)
    for (const f of finished) if (f.status === "fulfilled") expect(f.value.status).toBe(200)
    expect((await two.exited).code).toBe(0)
    one.process.kill("SIGINT")
    expect((await one.exited).code).toBe(0)
  })

  it("--memory serves without a file; a bad flag is a usage error; --help documents every flag", async () => {
    const [mem, help, bad] = await Promise.all([serve(["--memory"]), cli(["--help"]), cli(["serve", "--prot", "1"])])
    expect((await client(mem.url).get("/health")).status).toBe(200)
    mem.process.kill("SIGTERM")
    expect((await mem.exited).code).toBe(0)
    expect(help.status).toBe(0)
    for (
      const flag of [
        "--port",
        "--host",
        "--database",
        "--memory",
        "--admin-token",
        "SLOTWISE_ADMIN_TOKEN",
        "--allow-private-webhooks",
        "--name",
        "--plan",
        "--json"
      ]
    ) {
      expect(help.stdout).toContain(flag)
    }
    expect(bad.status).toBe(2)
    expect(bad.stderr).toContain("--prot")
  })

  it("accounts create --json creates an account offline", async () => {
    const file = path.join(dir, "offline.db")
    const created = await cli([
      "accounts",
      "create",
      "--database",
      file,
      "--name",
      "Offline",
      "--plan",
      "pro",
      "--allowed-origin",
      "https://a.example.com",
      "--json"
    ])
    expect(created.status).toBe(0)
    const body = JSON.parse(created.stdout)
    expect(body.account).toMatchObject({ name: "Offline", plan: "pro", allowed_origins: ["https://a.example.com"] })
    expect(body.keys.production.secret).toMatch(/^sk_live_/)
    const invalid = await cli(["accounts", "create", "--database", file, "--name", "X", "--plan", "gold"])
    expect(invalid.status).toBe(1)
    expect(invalid.stderr).toContain("plan")
  })
})

describe("every command's storage", { timeout: 90_000, concurrent: true }, () => {
  it("users create opens $SLOTWISE_DATABASE_URL as the other commands do, and names the database in its output and errors", async () => {
    const file = path.join(dir, "from-env.db")
    const env = { SLOTWISE_DATABASE_URL: file }
    // Its own directory: no other test's command could have put a slotwise.db there.
    const cwd = fs.mkdtempSync(path.join(dir, "env-"))
    const created = await run(["accounts", "create", "--name", "Env", "--json"], env, "", cwd)
    expect(created.status).toBe(0)
    const account = JSON.parse(created.stdout).account.id
    const user = await run(
      ["users", "create", "--account", account, "--email", "env@example.com", "--password-stdin"],
      env,
      "a long enough passphrase\n",
      cwd
    )
    expect(user.stderr).toBe("")
    expect(user.status).toBe(0)
    expect(user.stdout).toContain(`in ${account} (SQLite database ${file})`)
    // --database wins over the variable.
    const other = path.join(dir, "flag-wins.db")
    const [missing, listed] = await Promise.all([
      run(
        ["users", "create", "--account", "acc_01JZZZZZZZZZZZZZZZZZZZZZZZ", "--email", "x@example.com", "--password-stdin"],
        env,
        "a long enough passphrase",
        cwd
      ),
      run(["accounts", "list", "--database", other], env, "", cwd)
    ])
    expect(missing.status).toBe(1)
    expect(missing.stderr).toContain(`(SQLite database ${file})`)
    // Nothing fell back to ./slotwise.db.
    expect(fs.existsSync(path.join(cwd, "slotwise.db"))).toBe(false)
    expect(listed.stdout).toContain(`No accounts in SQLite database ${other}`)
  })

  it("a PostgreSQL URL is named without its password", async () => {
    const database = await createTestDatabase()
    try {
      const url = new URL(database.url)
      url.password = "hunter2-secret"
      const env = { SLOTWISE_DATABASE_URL: url.href }
      expect((await run(["accounts", "create", "--name", "Shared", "--plan", "pro"], env)).status).toBe(0)
      const [listed, missing] = await Promise.all([
        run(["accounts", "list"], env),
        run(["accounts", "update", "acc_01JZZZZZZZZZZZZZZZZZZZZZZZ", "--name", "X"], env)
      ])
      expect(listed.status).toBe(0)
      expect(listed.stdout).toContain(`1 account(s) in PostgreSQL postgres://${url.username}:***@${url.host}${url.pathname}`)
      expect(listed.stdout).toMatch(/acc_\w{26} {2}"Shared" {2}plan pro {2}600\/min {2}origins none/)
      expect(missing.status).toBe(1)
      expect(missing.stderr).toContain(`:***@${url.host}`)
      for (const out of [listed.stdout, listed.stderr, missing.stdout, missing.stderr]) expect(out).not.toContain("hunter2")
    } finally {
      await database.drop()
    }
  })
})

describe("slotwise accounts", { timeout: 90_000, concurrent: true }, () => {
  it("list and update change an account offline; invalid values are refused by field", async () => {
    const file = path.join(dir, "accounts.db")
    const db = ["--database", file]
    const id = JSON.parse((await run(["accounts", "create", ...db, "--name", "Shop", "--json"])).stdout).account.id
    const updated = await run([
      "accounts",
      "update",
      id,
      ...db,
      "--name",
      "Shop 2",
      "--plan",
      "pro",
      "--allowed-origin",
      "https://a.example.com",
      "--allowed-origin",
      "https://b.example.com",
      "--rate-limit",
      "42",
      "--json"
    ])
    expect(updated.status).toBe(0)
    expect(JSON.parse(updated.stdout)).toMatchObject({
      id,
      name: "Shop 2",
      plan: "pro",
      allowed_origins: ["https://a.example.com", "https://b.example.com"],
      rate_limit_per_minute: 42,
      limits: { requests_per_minute: 42 }
    })
    const back = await run(["accounts", "update", id, ...db, "--rate-limit", "plan", "--no-allowed-origins"])
    expect(back.status).toBe(0)
    expect(back.stdout).toContain("600/min")
    const listed = JSON.parse((await run(["accounts", "list", ...db, "--json"])).stdout)
    expect(listed).toHaveLength(1)
    expect(listed[0]).toMatchObject({ id, name: "Shop 2", allowed_origins: [], rate_limit_per_minute: null })
    const invalid = await run(["accounts", "update", id, ...db, "--allowed-origin", "https://a.example.com/path", "--rate-limit", "0"])
    expect(invalid.status).toBe(1)
    expect(invalid.stderr).toContain("allowed_origins.0")
    expect(invalid.stderr).toContain("rate_limit_per_minute")
    const branded = await run([
      "accounts",
      "update",
      id,
      ...db,
      "--handle",
      "shop-two",
      "--display-name",
      "Shop Two",
      "--primary-color",
      "#abc",
      "--hide-powered-by",
      "true",
      "--json"
    ])
    expect(branded.status).toBe(0)
    expect(JSON.parse(branded.stdout)).toMatchObject({
      handle: "shop-two",
      branding: { display_name: "Shop Two", logo_url: null, primary_color: "#abc", hide_powered_by: true }
    })
    const unbranded = await run(["accounts", "update", id, ...db, "--display-name", "", "--json"])
    expect(JSON.parse(unbranded.stdout).branding).toMatchObject({ display_name: null, primary_color: "#abc" })
    // Each of these leaves the account as it is.
    const [listedAgain, reserved, notBoolean, noId, noChange] = await Promise.all([
      run(["accounts", "list", ...db]),
      run(["accounts", "update", id, ...db, "--handle", "admin"]),
      run(["accounts", "update", id, ...db, "--hide-powered-by", "maybe"]),
      run(["accounts", "update", ...db, "--name", "x"]),
      run(["accounts", "update", id, ...db])
    ])
    expect(listedAgain.stdout).toContain("handle shop-two")
    expect(reserved.status).toBe(1)
    expect(reserved.stderr).toContain("handle: admin is reserved")
    expect([notBoolean.status, noId.status, noChange.status]).toEqual([2, 2, 2])
  })

  it("--help for every command and subcommand; serve's lists each flag's environment variable", async () => {
    const cases: Array<[ReadonlyArray<string>, string]> = [
      [["accounts", "create", "--help"], "--allowed-origin"],
      [["accounts", "list", "--help"], "--json"],
      [["accounts", "update", "--help"], "--no-allowed-origins"],
      [["users", "--help"], "--password-stdin"],
      [["users", "create", "--help"], "--password-stdin"]
    ]
    const [serveHelp, accounts, ...helps] = await Promise.all(
      [["serve", "--help"], ["accounts", "--help"], ...cases.map(([args]) => args)].map((args) => run(args))
    )
    expect(serveHelp!.status).toBe(0)
    for (
      const name of [
        "PORT",
        "HOST",
        "DATABASE_URL",
        "MEMORY",
        "REDIS_URL",
        "ADMIN_TOKEN",
        "PUBLIC_URL",
        "TRUST_PROXY",
        "ALLOW_PRIVATE_WEBHOOKS",
        "WEBHOOK_TIMEOUT_MS",
        "WEBHOOK_LEASE_MS"
      ]
    ) {
      expect(serveHelp!.stdout).toContain(`$SLOTWISE_${name}`)
    }
    for (const sub of ["create", "list", "update"]) expect(accounts!.stdout).toMatch(new RegExp(`^  ${sub} `, "m"))
    for (const [n, [args, flag]] of cases.entries()) {
      const help = helps[n]!
      expect(help.status, args.join(" ")).toBe(0)
      expect(help.stdout).toContain(flag)
      expect(help.stdout).toContain("$SLOTWISE_DATABASE_URL")
    }
  })
})

describe("slotwise serve's configuration and logs", { timeout: 90_000, concurrent: true }, () => {
  it("reads its settings from the environment, a flag wins, and it logs storage, Redis and public URL without passwords", async () => {
    const redis = new URL(process.env.SLOTWISE_TEST_REDIS_URL ?? "redis://127.0.0.1:6379")
    redis.password = "redis-secret"
    const server = await serveProcess(["--public-url", "https://flag.example.test"], {
      SLOTWISE_MEMORY: "true",
      SLOTWISE_REDIS_URL: redis.href,
      SLOTWISE_PUBLIC_URL: "https://env.example.test",
      SLOTWISE_ADMIN_TOKEN: ""
    })
    const log = server.lines.join("\n")
    expect(log).toMatch(/^slotwise \d+\.\d+\.\d+ \(pid \d+\)/m)
    expect(log).toContain("storage: in-memory storage")
    expect(log).toContain(`rate limits: Redis redis://:***@${redis.host}`)
    expect(log).toContain("public URL (the OAuth issuer): https://flag.example.test")
    expect(log).not.toContain("redis-secret")
    expect(log).not.toContain("env.example.test")
    // With a public URL the first account allows no origins until the operator names them.
    expect(log).not.toContain("may be used from")
    expect(expectStatus(await client(server.url).get("/.well-known/oauth-authorization-server"), 200).issuer).toBe(
      "https://flag.example.test"
    )

    // GET /: where the reference is, for API clients; browsers are sent there.
    const root = expectStatus(await client(server.url).get("/"), 200)
    expect(root).toMatchObject({ name: "slotwise", docs: "/docs", openapi: "/v1/openapi.json", health: "/health" })
    const browser = await client(server.url).get("/", { headers: { accept: "text/html,application/xhtml+xml" } })
    expect(browser.status).toBe(302)
    expect(browser.headers.get("location")).toBe("/docs")

    server.process.kill("SIGTERM")
    expect((await server.exited).code).toBe(0)
    const shutdown = server.lines.slice(server.lines.findIndex((l) => l.startsWith("received SIGTERM")))
    expect(shutdown.map((l) => l.split(":")[0])).toEqual([
      "received SIGTERM",
      "HTTP server closed",
      "webhook dispatcher stopped",
      "storage closed; exiting"
    ])
  })

  it("on a fresh database prints the local dev origins the first account allows", async () => {
    const server = await serveProcess(["--memory"])
    const port = new URL(server.url).port
    const line = server.lines.find((l) => l.startsWith("Its publishable keys may be used from"))
    expect(line).toContain(`http://localhost:${port}, http://127.0.0.1:${port}, http://localhost:5173`)
    server.process.kill("SIGINT")
    expect((await server.exited).code).toBe(0)
  })
})
