/**
 * The binary: two server processes on one SQLite file racing for one seat, first-start keys,
 * `accounts create`, `--help`, and graceful shutdown on SIGTERM.
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as readline from "node:readline"
import { fileURLToPath } from "node:url"
import { afterAll, describe, expect, it } from "vitest"
import { client, expectProblem, expectStatus, seed } from "./harness.js"

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..")
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "slotwise-http-processes-"))
const children: Array<ChildProcess> = []
afterAll(() => {
  for (const c of children) if (c.exitCode === null) c.kill("SIGKILL")
  fs.rmSync(dir, { recursive: true, force: true })
})

const cli = (args: ReadonlyArray<string>) =>
  spawnSync(process.execPath, ["--import", "tsx", "main.ts", ...args], { cwd: root, encoding: "utf8", env: { ...process.env, SLOTWISE_ADMIN_TOKEN: "" } })

interface Server {
  readonly url: string
  readonly lines: Array<string>
  readonly process: ChildProcess
  readonly exited: Promise<number | null>
}

const serve = (args: ReadonlyArray<string>): Promise<Server> =>
  new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", "tsx", "main.ts", "serve", "--port", "0", ...args], {
      cwd: root,
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env, SLOTWISE_ADMIN_TOKEN: "admin-secret" }
    })
    children.push(child)
    const lines: Array<string> = []
    let stderr = ""
    child.stderr!.on("data", (d) => (stderr += String(d)))
    const exited = new Promise<number | null>((r) => child.on("exit", (code) => r(code)))
    readline.createInterface({ input: child.stdout! }).on("line", (line) => {
      lines.push(line)
      const m = /^listening on (http:\/\/\S+)$/.exec(line)
      if (m) resolve({ url: m[1]!, lines, process: child, exited })
    })
    void exited.then((code) => reject(new Error(`server exited (${code}) before listening: ${stderr}`)))
  })

describe("slotwise serve", () => {
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
    const inFlight = Array.from({ length: 10 }, () => client(two.url, key).get(`/v1/availability/slots?service_id=${s.service.id}&start=2027-03-29T00:00:00Z&end=2027-05-29T00:00:00Z`))
    await new Promise((r) => setTimeout(r, 20))
    two.process.kill("SIGTERM")
    const finished = await Promise.allSettled(inFlight)
    for (const f of finished) if (f.status === "fulfilled") expect(f.value.status).toBe(200)
    expect(await two.exited).toBe(0)
    one.process.kill("SIGINT")
    expect(await one.exited).toBe(0)
  }, 60_000)

  it("--memory serves without a file; a bad flag is a usage error; --help documents every flag", async () => {
    const mem = await serve(["--memory"])
    expect((await client(mem.url).get("/health")).status).toBe(200)
    mem.process.kill("SIGTERM")
    expect(await mem.exited).toBe(0)
    const help = cli(["--help"])
    expect(help.status).toBe(0)
    for (const flag of ["--port", "--host", "--database", "--memory", "--admin-token", "SLOTWISE_ADMIN_TOKEN", "--allow-private-webhooks", "--name", "--plan", "--json"]) {
      expect(help.stdout).toContain(flag)
    }
    const bad = cli(["serve", "--prot", "1"])
    expect(bad.status).toBe(2)
    expect(bad.stderr).toContain("--prot")
  }, 30_000)

  it("accounts create --json creates an account offline", () => {
    const file = path.join(dir, "offline.db")
    const created = cli(["accounts", "create", "--database", file, "--name", "Offline", "--plan", "pro", "--allowed-origin", "https://a.example.com", "--json"])
    expect(created.status).toBe(0)
    const body = JSON.parse(created.stdout)
    expect(body.account).toMatchObject({ name: "Offline", plan: "pro", allowed_origins: ["https://a.example.com"] })
    expect(body.keys.production.secret).toMatch(/^sk_live_/)
    const invalid = cli(["accounts", "create", "--database", file, "--name", "X", "--plan", "gold"])
    expect(invalid.status).toBe(1)
    expect(invalid.stderr).toContain("plan")
  }, 30_000)
})
