/**
 * Two checkouts of Slotwise compared under the same load: which one a request costs less CPU
 * in. Run: `npx tsx bench/side-by-side.ts <checkout A> <checkout B> [request]`, where request
 * is `create` (default), `refused`, `get`, `get-api` (the same read through `HttpApi`),
 * `list` (a page of 20) or `slots` (a day); about a minute and a half by default
 * (`BENCH_ROUNDS`, `BENCH_SECONDS`). Each checkout needs its own `node_modules` (a git
 * worktree can link the main one); its bin builds `dist/` first when stale, as `npm start`
 * would.
 *
 * Each checkout's bin serves a SQLite file of its own with the bin's heap caps, set up alike
 * (an account, a staff member bookable all week with a service, a client, 21 bookings to
 * list). autocannon (10 connections) loads them in alternating bursts, the order turning
 * each round, and reads each server's CPU per request from /proc. The server started second
 * measured 2–8 % dearer or cheaper than the first on these machines, the same code in both,
 * so the pair is run twice, B started first the second time, and the figure printed is the
 * geometric mean of the two runs' median ratios (B against A). `BENCH_PIN=1` runs both
 * servers on the second core and autocannon on the first (`taskset`), which steadies the pairs.
 *
 * `BENCH_FLAGS_A` / `BENCH_FLAGS_B` add node flags to one side's server after the bin's heap
 * caps (a V8 setting tried against none: the same checkout twice, flags on one side).
 *
 * This is how the figures "two servers side by side" in docs/performance.md were taken.
 */
import type { ChildProcess } from "node:child_process"
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import { createRequire } from "node:module"
import * as os from "node:os"
import * as path from "node:path"
import { call } from "./httpCall.js"
import { median } from "./rounds.js"
import { benchAccount, BIN_CAPS, bookable, cpuOf, createsAt, halfHour, nodeFlags, startServer } from "./servers.js"

const autocannon = createRequire(import.meta.url)("autocannon") as (options: any) => Promise<any>
const [rootA, rootB, request = "create"] = process.argv.slice(2)
const REQUESTS = ["create", "refused", "get", "get-api", "list", "slots"]
if (rootA === undefined || rootB === undefined || !REQUESTS.includes(request)) {
  console.error(`usage: npx tsx bench/side-by-side.ts <checkout A> <checkout B> [${REQUESTS.join("|")}]`)
  process.exit(2)
}
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 10)
const SECONDS = Number(process.env.BENCH_SECONDS ?? 1.5)
const PIN = process.env.BENCH_PIN === "1"
const ADMIN = "bench-admin-token"
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "slotwise-side-by-side-"))
const children: Array<ChildProcess> = []
process.on("exit", () => {
  children.forEach((c) => c.kill("SIGKILL"))
  fs.rmSync(dir, { recursive: true, force: true })
})

interface Loaded {
  readonly name: string
  readonly pid: number
  readonly options: () => any
}

/** `root`'s server, set up, with the autocannon options of the request measured. */
const serve = async (root: string, name: string, file: string): Promise<Loaded> => {
  const flags = nodeFlags(process.env[`BENCH_FLAGS_${name}`])
  const bin = [
    ...BIN_CAPS,
    ...flags,
    path.join(root, "bin", "slotwise.js"),
    "serve",
    "--port",
    "0",
    "--database",
    path.join(dir, file),
    "--admin-token",
    ADMIN
  ]
  const server = await startServer(PIN ? ["-c", "1", process.execPath, ...bin] : bin, {
    cwd: root,
    children,
    ...(PIN ? { command: "taskset" } : {})
  })
  const key = await benchAccount(server.url, ADMIN)
  const { service, staff } = await bookable(server.url, key, "Bea", "Colour")
  const client = (await call(`${server.url}/v1/clients`, "POST", key, { name: "Bob" })).id
  const book = (i: number) =>
    call(`${server.url}/v1/bookings`, "POST", key, { service_id: service, staff_id: staff, client_id: client, start: halfHour(i) })
  const booking = (await book(80_000)).id
  for (let i = 1; i <= 20; i++) await book(80_000 + i)
  const headers = { authorization: `Bearer ${key}`, "content-type": "application/json" }
  const day = halfHour(40_000).slice(0, 10)
  const creates = { ...createsAt(server.url, { service, staff, client }, 11), headers }
  const byRequest: Record<string, () => any> = {
    create: () => creates,
    refused: () => ({
      ...creates,
      requests: undefined,
      body: JSON.stringify({ service_id: service, staff_id: staff, client_id: client, start: "not a time" })
    }),
    get: () => ({ url: `${server.url}/v1/bookings/${booking}`, headers }),
    "get-api": () => ({ url: `${server.url}/v1/bookings/${booking}?`, headers }),
    list: () => ({ url: `${server.url}/v1/bookings?limit=20&staff_id=${staff}`, headers }),
    slots: () => ({ url: `${server.url}/v1/availability/slots?service_id=${service}&start=${day}T00:00:00Z&end=${day}T23:59:59Z`, headers })
  }
  return { name, pid: server.pid, options: byRequest[request]! }
}

const burst = async (loaded: Loaded, seconds: number) => {
  const cpu0 = cpuOf(loaded.pid)
  const result = await autocannon({ connections: 10, duration: seconds, ...loaded.options() })
  const expected = request === "refused" ? 0 : result.non2xx
  if (expected + result.errors > 0) throw new Error(`${loaded.name}: ${result.non2xx} non-2xx, ${result.errors} errors`)
  return { cpu: (cpuOf(loaded.pid) - cpu0) / result.requests.total, rps: result.requests.total / seconds }
}

/** One pair: `first` started before `second`, loaded in alternating bursts; B's medians against A's. */
const pair = async (first: [string, string], second: [string, string]) => {
  const one = await serve(first[0], first[1], `${first[1]}-${children.length}.db`)
  const two = await serve(second[0], second[1], `${second[1]}-${children.length}.db`)
  for (const loaded of [one, two]) await burst(loaded, 2)
  const figures = new Map<string, Array<{ cpu: number; rps: number }>>([[one.name, []], [two.name, []]])
  for (let round = 0; round < ROUNDS; round++) {
    for (const loaded of round % 2 === 0 ? [one, two] : [two, one]) figures.get(loaded.name)!.push(await burst(loaded, SECONDS))
  }
  for (const loaded of [one, two]) {
    process.kill(loaded.pid, "SIGKILL")
  }
  const [a, b] = [figures.get("A")!, figures.get("B")!]
  return {
    cpu: median(b.map((x, i) => x.cpu / a[i]!.cpu)),
    rps: median(b.map((x, i) => x.rps / a[i]!.rps)),
    a: { cpu: median(a.map((x) => x.cpu)), rps: median(a.map((x) => x.rps)) },
    b: { cpu: median(b.map((x) => x.cpu)), rps: median(b.map((x) => x.rps)) }
  }
}

for (const root of [rootA, rootB])
  spawnSync(process.execPath, [path.join(root, "bin", "slotwise.js"), "--version"], { cwd: root, stdio: "ignore" })
if (PIN) spawnSync("taskset", ["-p", "-c", "0", String(process.pid)], { stdio: "ignore" })
const aFirst = await pair([rootA, "A"], [rootB, "B"])
const bFirst = await pair([rootB, "B"], [rootA, "A"])
const show = (label: string, r: typeof aFirst) =>
  console.log(
    `${label}: A ${r.a.cpu.toFixed(0)} µs, ${r.a.rps.toFixed(0)}/s; B ${r.b.cpu.toFixed(0)} µs, ${r.b.rps.toFixed(0)}/s; ` +
      `B/A CPU ${r.cpu.toFixed(3)}×, req/s ${r.rps.toFixed(3)}×`
  )
console.log(`\n${request}: ${ROUNDS} rounds of ${SECONDS} s per pair, 10 connections, medians${PIN ? ", servers on core 1" : ""}`)
show("A started first", aFirst)
show("B started first", bFirst)
console.log(
  `B against A: ${Math.sqrt(aFirst.cpu * bFirst.cpu).toFixed(3)}× the CPU per request, ` +
    `${Math.sqrt(aFirst.rps * bFirst.rps).toFixed(3)}× the requests per second ` +
    `(the server started second measured ${Math.sqrt(aFirst.cpu / bFirst.cpu).toFixed(3)}× its own CPU)`
)
process.exit(0)
