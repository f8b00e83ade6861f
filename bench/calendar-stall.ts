/**
 * Does a calendar sync stall requests? Starts `slotwise serve` (the bundled binary, on a
 * SQLite file) and measures `GET /v1/bookings/{id}` with autocannon (4 connections) in
 * alternating windows: idle, then while a 2 MB feed syncs back to back
 * (`POST /v1/staff/{id}/calendars/{id}/sync` in a loop), `ROUNDS` times. The server, the
 * feed's server, autocannon and this script are four processes, so only the server's own
 * work is on its event loop. Prints each window's p99, the min/median of the during/idle p99
 * ratios (target ≤ 2), the syncs' times alone and under load (target < 1000 ms), and the
 * load average. About a minute and a half once dist/ is built (a first build of a changed
 * checkout comes first and is not timed).
 * Run: npx tsx bench/calendar-stall.ts   (BENCH_SECONDS per window, BENCH_ROUNDS windows)
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process"
import * as fs from "node:fs"
import { createRequire } from "node:module"
import * as os from "node:os"
import * as path from "node:path"
import * as readline from "node:readline"
import { fileURLToPath } from "node:url"
import { call } from "./httpCall.js"
import { median } from "./rounds.js"

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..")
const autocannonCli = createRequire(import.meta.url).resolve("autocannon/autocannon.js")
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "slotwise-bench-stall-"))
const SECONDS = Number(process.env.BENCH_SECONDS ?? 6)
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 4)
const CONNECTIONS = 4
const ADMIN = "bench-admin-token"
const children: Array<ChildProcess> = []
process.on("exit", () => {
  for (const child of children) if (child.exitCode === null) child.kill("SIGKILL")
  fs.rmSync(dir, { recursive: true, force: true })
})
const loadAverage = () => os.loadavg().map((l) => l.toFixed(2)).join(" ")
const loadAtStart = loadAverage()
const progress = (what: string) => process.stderr.write(`[${(performance.now() / 1000).toFixed(1)} s] ${what}\n`)

/** Starts a child process and waits for the first stdout line `pattern` matches. */
const startChild = (args: ReadonlyArray<string>, pattern: RegExp, options: { stdin?: "pipe" | "ignore" } = {}) =>
  new Promise<RegExpExecArray>((resolve, reject) => {
    const child = spawn(process.execPath, args, { cwd: root, stdio: [options.stdin ?? "ignore", "pipe", "inherit"] })
    children.push(child)
    readline.createInterface({ input: child.stdout! }).on("line", (line) => {
      const m = pattern.exec(line)
      if (m) resolve(m)
    })
    child.on("exit", (code) => reject(new Error(`${args.join(" ")} exited ${code}`)))
  })

const [, feedUrl, feedBytes] = await startChild(["--import", "tsx", "bench/calendar-stall-feed.ts"], /^feed (\S+) (\d+)$/, {
  stdin: "pipe"
})

progress("feed served; building the server")
// Build (tsc + bundle) outside the timing.
spawnSync(process.execPath, ["bin/slotwise.js", "--version"], { cwd: root, stdio: "ignore" })
// Feeds are synced on request only: a sync interval far beyond the run.
const [, url] = await startChild([
  "bin/slotwise.js",
  "serve",
  "--port",
  "0",
  "--database",
  path.join(dir, "slotwise.db"),
  "--admin-token",
  ADMIN,
  "--allow-private-webhooks",
  "--calendar-sync-minutes",
  "1440"
], /^listening on (http:\/\/\S+)$/)

progress("server started")
const api = (method: string, route: string, key: string, body?: unknown) => call(`${url}${route}`, method, key, body)

const account = await api("POST", "/admin/v1/accounts", ADMIN, { name: "Bench", plan: "business", rate_limit_per_minute: 1_000_000 })
const key: string = account.keys.sandbox.secret
const staff = await api("POST", "/v1/staff", key, { name: "Ana", time_zone: "Europe/Berlin" })
const service = await api("POST", "/v1/services", key, { name: "Cut", duration_minutes: 30, staff_ids: [staff.id], max_advance_days: 365 })
await api("POST", "/v1/availability", key, {
  staff_id: staff.id,
  type: "weekly",
  weekdays: [1, 2, 3, 4, 5, 6, 7],
  start_time: "00:00",
  end_time: "24:00"
})
const client = await api("POST", "/v1/clients", key, { name: "Bob" })
const start = new Date(Math.ceil(Date.now() / 86_400_000) * 86_400_000 + 86_400_000 + 3 * 3_600_000).toISOString().replace(".000Z", "Z")
const booking = await api("POST", "/v1/bookings", key, { service_id: service.id, staff_id: staff.id, client_id: client.id, start })
const subscribed = await api("POST", `/v1/staff/${staff.id}/calendars`, key, { url: feedUrl })
const syncRoute = `/v1/staff/${staff.id}/calendars/${subscribed.id}/sync`

interface Latency {
  readonly p50: number
  readonly p99: number
  readonly max: number
  readonly requests: number
  readonly errors: number
}

/** autocannon, in a process of its own, on the booking for `seconds`. */
const load = (seconds: number) =>
  new Promise<Latency>((resolve, reject) => {
    const args = [
      autocannonCli,
      "-j",
      "-c",
      String(CONNECTIONS),
      "-d",
      String(seconds),
      "-H",
      `authorization=Bearer ${key}`,
      `${url}/v1/bookings/${booking.id}`
    ]
    const child = spawn(process.execPath, args, { stdio: ["ignore", "pipe", "ignore"] })
    children.push(child)
    let out = ""
    child.stdout.on("data", (chunk) => (out += chunk))
    child.on("exit", (code) => {
      if (code !== 0) return reject(new Error(`autocannon exited ${code}`))
      const r = JSON.parse(out.trim().split("\n").pop()!)
      resolve({ p50: r.latency.p50, p99: r.latency.p99, max: r.latency.max, requests: r.requests.average, errors: r.non2xx + r.errors })
    })
  })

const calendarRoute = syncRoute.slice(0, -"/sync".length)
/** Asks for a sync (answered at once) and reads the calendar until the sync has ended. */
const syncOnce = async () => {
  const t0 = performance.now()
  let synced = await api("POST", syncRoute, key)
  while (synced.sync_state !== "idle") {
    await new Promise((resolve) => setTimeout(resolve, 5))
    synced = await api("GET", calendarRoute, key)
  }
  if (synced.status !== "synced") throw new Error(`sync failed: ${synced.last_error}`)
  return { ms: performance.now() - t0, events: synced.event_count as number }
}

/** Syncs the feed back to back until `until` settles; each sync's time in ms. */
const syncUntil = async (until: Promise<unknown>) => {
  let done = false
  void until.then(() => (done = true), () => (done = true))
  const times: Array<number> = []
  while (!done) times.push((await syncOnce()).ms)
  return times
}

// The first sync (which starts the parse worker and stores every range), then syncs with no requests.
const first = await syncOnce()
const alone: Array<number> = []
for (let i = 0; i < 5; i++) alone.push((await syncOnce()).ms)
await load(1)

const rounds: Array<{ idle: Latency; busy: Latency; syncs: Array<number> }> = []
progress("warmed up; measuring")
for (let round = 0; round < ROUNDS; round++) {
  const idle = await load(SECONDS)
  const busyLoad = load(SECONDS)
  const syncs = await syncUntil(busyLoad)
  rounds.push({ idle, busy: await busyLoad, syncs })
}

const ms = (n: number) => `${n.toFixed(0).padStart(5)} ms`
const spread = (xs: ReadonlyArray<number>) => {
  const sorted = [...xs].sort((a, b) => a - b)
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!
  return `n ${sorted.length}, min ${ms(sorted[0]!)}, median ${ms(at(0.5))}, p90 ${ms(at(0.9))}, max ${ms(sorted[sorted.length - 1]!)}`
}
const ratios = rounds.map((r) => r.busy.p99 / Math.max(1, r.idle.p99))
console.log(
  `GET /v1/bookings/{id}: ${CONNECTIONS} connections, ${ROUNDS} rounds of ${SECONDS} s idle then ${SECONDS} s during back-to-back syncs`
)
console.log(`feed ${(Number(feedBytes) / 1024 / 1024).toFixed(2)} MB, ${first.events} busy occurrences`)
rounds.forEach((r, i) =>
  console.log(
    `  round ${i + 1}  idle p50 ${r.idle.p50} p99 ${String(r.idle.p99).padStart(3)} ms (${
      Math.round(r.idle.requests)
    } req/s)   during sync p50 ${r.busy.p50} p99 ${String(r.busy.p99).padStart(4)} ms max ${r.busy.max} ms (${
      Math.round(r.busy.requests)
    } req/s)   ratio ${ratios[i]!.toFixed(2)}   errors ${r.idle.errors + r.busy.errors}`
  )
)
console.log(`  p99 ratio         min ${Math.min(...ratios).toFixed(2)}, median ${median(ratios).toFixed(2)}  (target ≤ 2)`)
console.log(`  first sync        ${ms(first.ms)}  (starts the parse worker, stores every range)`)
console.log(`  syncs, no load    ${spread(alone)}  (target < 1000 ms)`)
console.log(`  syncs under load  ${spread(rounds.flatMap((r) => r.syncs))}`)
console.log(`  load average      ${loadAtStart} at start, ${loadAverage()} at end (1, 5, 15 min; ${os.cpus().length} cores)`)
process.exit(0)
