/**
 * What SQLite statements a create runs in the server, and what each costs there: the bundled
 * server (`slotwise serve` on a SQLite file, the bin's heap caps) under creates from
 * autocannon (10 connections, a booking every half hour for one staff member), every
 * better-sqlite3 call timed inside it (bench/statement-timer.cjs, preloaded). Prints, per
 * statement, how many a create runs, µs each and µs per create, and the group commit's size.
 * Run: `npx tsx bench/create-statements.ts` (BENCH_SECONDS, 5 by default, after a 3 s warm-up).
 * The timing wraps each call, so the figures carry a little of the wrapper's own cost.
 */
import type { ChildProcess } from "node:child_process"
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import { createRequire } from "node:module"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { call } from "./httpCall.js"
import { benchAccount, BIN_CAPS, bookable, createsAt, startServer } from "./servers.js"

const autocannon = createRequire(import.meta.url)("autocannon") as (options: any) => Promise<any>
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5)
const ADMIN = "bench-admin-token"
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..")
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "slotwise-statements-"))
const out = path.join(dir, "statements.json")
const children: Array<ChildProcess> = []
process.on("exit", () => {
  children.forEach((c) => c.kill("SIGKILL"))
  fs.rmSync(dir, { recursive: true, force: true })
})

// Build (tsc + bundle) outside the timing, as the first `npm start` would.
spawnSync(process.execPath, ["bin/slotwise.js", "--version"], { cwd: root, stdio: "ignore" })
process.env.STATEMENT_TIMES_OUT = out
const server = await startServer(
  [
    ...BIN_CAPS,
    "-r",
    path.join(root, "bench", "statement-timer.cjs"),
    "bin/slotwise.js",
    "serve",
    "--port",
    "0",
    "--database",
    path.join(dir, "bench.db"),
    "--admin-token",
    ADMIN
  ],
  { cwd: root, children }
)
const key = await benchAccount(server.url, ADMIN)
const { service, staff } = await bookable(server.url, key, "Bea", "Colour")
const client = await call(`${server.url}/v1/clients`, "POST", key, { name: "Bob" })

const load = createsAt(server.url, { service, staff, client: client.id }, 0)
const creates = (seconds: number) =>
  autocannon({ ...load, connections: 10, duration: seconds, headers: { ...load.headers, authorization: `Bearer ${key}` } })

await creates(3)
server.child.kill("SIGUSR2")
const result = await creates(SECONDS)
server.child.kill("SIGUSR2")
const deadline = Date.now() + 10_000
while (!fs.existsSync(out)) {
  if (Date.now() > deadline) throw new Error("the server wrote no statement times")
  await new Promise((resolve) => setTimeout(resolve, 50))
}
// Written in one call; read once it parses.
const rows = await (async () => {
  for (;;) {
    try {
      return JSON.parse(fs.readFileSync(out, "utf8")) as Array<{ sql: string; calls: number; micros: number }>
    } catch (error) {
      if (Date.now() > deadline) throw error
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
  }
})()

const made = result.requests.total - result.non2xx
if (result.non2xx + result.errors > 0) console.log(`(${result.non2xx} non-2xx, ${result.errors} errors)`)
const commits = rows.find((r) => r.sql === "COMMIT")?.calls ?? 0
console.log(
  `\n${made} creates in ${SECONDS} s (10 connections); ${commits} COMMITs, ${(made / Math.max(commits, 1)).toFixed(1)} creates a group\n`
)
console.log(`${"per create".padStart(10)} ${"µs each".padStart(9)} ${"µs/create".padStart(10)}  statement`)
let total = 0
for (const row of rows.sort((a, b) => b.micros - a.micros)) {
  const perCreate = row.micros / made
  total += perCreate
  if (perCreate < 0.05) continue
  const sql = row.sql
    .replace(/\s+/g, " ")
    .replace(/^SELECT ((?:"?\w+"?, ){3,}"?\w+"?) FROM /, "SELECT … FROM ")
    .replace(/^INSERT INTO (\S+) \(.*?\) VALUES \(.*?\)/, "INSERT INTO $1 (…) VALUES (…)")
  console.log(
    `${(row.calls / made).toFixed(2).padStart(10)} ${(row.micros / row.calls).toFixed(1).padStart(9)} ${
      perCreate.toFixed(1).padStart(10)
    }  ${sql.length > 100 ? `${sql.slice(0, 97)}...` : sql}`
  )
}
console.log(`${"".padStart(21)}${total.toFixed(1).padStart(10)}  in all`)
process.exit(0)
