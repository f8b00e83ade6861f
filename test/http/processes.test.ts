/**
 * The binary: two server processes on one SQLite file racing for one seat, first-start keys,
 * `accounts create`, `--help`, and graceful shutdown on SIGTERM.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { binary, client, expectProblem, expectStatus, killServers, runCli, seed, serveProcess } from "./harness.js"

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "slotwise-http-processes-"))
// Bundling the binary is shared by the tests (and other files): done once, before them.
beforeAll(() => binary().then(() => undefined), 120_000)
afterAll(() => {
  killServers()
  fs.rmSync(dir, { recursive: true, force: true })
})

const cli = (args: ReadonlyArray<string>) => runCli(args, { SLOTWISE_ADMIN_TOKEN: "" })
const serve = (args: ReadonlyArray<string>) => serveProcess(args, { SLOTWISE_ADMIN_TOKEN: "admin-secret" })

// Every test starts processes: their start-up, not the work, is what a busy machine stretches.
describe("slotwise serve", { timeout: 90_000 }, () => {
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
    const replies = await Promise.all(Array.from({ length: 50 }, (_, i) => client(i % 2 === 0 ? one.url : two.url, key).post("/v1/bookings", body)))
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
    const inFlight = Array.from({ length: 10 }, () =>
      client(two.url, key).get(`/v1/availability/slots?service_id=${s.service.id}&start=2027-03-29T00:00:00Z&end=2027-05-29T00:00:00Z`, {
        sent: () => ++handedOver === 10 && allSent()
      }))
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
    const mem = await serve(["--memory"])
    expect((await client(mem.url).get("/health")).status).toBe(200)
    mem.process.kill("SIGTERM")
    expect((await mem.exited).code).toBe(0)
    const help = await cli(["--help"])
    expect(help.status).toBe(0)
    for (const flag of ["--port", "--host", "--database", "--memory", "--admin-token", "SLOTWISE_ADMIN_TOKEN", "--allow-private-webhooks", "--name", "--plan", "--json"]) {
      expect(help.stdout).toContain(flag)
    }
    const bad = await cli(["serve", "--prot", "1"])
    expect(bad.status).toBe(2)
    expect(bad.stderr).toContain("--prot")
  })

  it("accounts create --json creates an account offline", async () => {
    const file = path.join(dir, "offline.db")
    const created = await cli(["accounts", "create", "--database", file, "--name", "Offline", "--plan", "pro", "--allowed-origin", "https://a.example.com", "--json"])
    expect(created.status).toBe(0)
    const body = JSON.parse(created.stdout)
    expect(body.account).toMatchObject({ name: "Offline", plan: "pro", allowed_origins: ["https://a.example.com"] })
    expect(body.keys.production.secret).toMatch(/^sk_live_/)
    const invalid = await cli(["accounts", "create", "--database", file, "--name", "X", "--plan", "gold"])
    expect(invalid.status).toBe(1)
    expect(invalid.stderr).toContain("plan")
  })
})
