/**
 * Does a calendar sync stall requests? Starts `slotwise serve` (the bundled binary, on a
 * SQLite file), serves a 2 MB feed from a local node:http server, and measures the latency of
 * `GET /v1/bookings/{id}` with autocannon, first idle, then while syncs of the feed run back
 * to back (`POST /v1/staff/{id}/calendars/{id}/sync` in a loop). Prints p50/p99 of both, their
 * ratio (target ≤ 2) and the syncs' times (target < 1000 ms). Bounded: about half a minute.
 * Run: npx tsx bench/calendar-stall.ts
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as http from "node:http"
import { createRequire } from "node:module"
import type { AddressInfo } from "node:net"
import * as os from "node:os"
import * as path from "node:path"
import * as readline from "node:readline"
import { fileURLToPath } from "node:url"
import { bigFeed } from "./calendarFeeds.js"
import { call } from "./httpCall.js"
import { median } from "./rounds.js"

const autocannon = createRequire(import.meta.url)("autocannon") as (options: any) => Promise<any>
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..")
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "slotwise-bench-stall-"))
const SECONDS = Number(process.env.BENCH_SECONDS ?? 8)
const CONNECTIONS = 4
const ADMIN = "bench-admin-token"
let child: ChildProcess | undefined
process.on("exit", () => {
  if (child?.exitCode === null) child.kill("SIGKILL")
  fs.rmSync(dir, { recursive: true, force: true })
})

const feed = bigFeed()
const feedServer = http.createServer((_req, res) => void res.writeHead(200, { "content-type": "text/calendar" }).end(feed.text))
await new Promise<void>((resolve) => feedServer.listen(0, "127.0.0.1", resolve))
const feedUrl = `http://127.0.0.1:${(feedServer.address() as AddressInfo).port}/big.ics`

// Build (tsc + bundle) outside the timing.
spawnSync(process.execPath, ["bin/slotwise.js", "--version"], { cwd: root, stdio: "ignore" })
const url = await new Promise<string>((resolve, reject) => {
  // Feeds are synced on request only: a sync interval far beyond the run.
  const args = ["bin/slotwise.js", "serve", "--port", "0", "--database", path.join(dir, "slotwise.db"), "--admin-token", ADMIN,
    "--allow-private-webhooks", "--calendar-sync-minutes", "1440"]
  child = spawn(process.execPath, args, { cwd: root, stdio: ["ignore", "pipe", "inherit"] })
  readline.createInterface({ input: child.stdout! }).on("line", (line) => {
    const m = /^listening on (http:\/\/\S+)$/.exec(line)
    if (m) resolve(m[1]!)
  })
  child.on("exit", (code) => reject(new Error(`slotwise serve exited ${code}`)))
})

const api = (method: string, route: string, key: string, body?: unknown) => call(`${url}${route}`, method, key, body)

const account = await api("POST", "/admin/v1/accounts", ADMIN, { name: "Bench", plan: "business", rate_limit_per_minute: 1_000_000 })
const key: string = account.keys.sandbox.secret
const staff = await api("POST", "/v1/staff", key, { name: "Ana", time_zone: "Europe/Berlin" })
const service = await api("POST", "/v1/services", key, { name: "Cut", duration_minutes: 30, staff_ids: [staff.id], max_advance_days: 365 })
await api("POST", "/v1/availability", key, { staff_id: staff.id, type: "weekly", weekdays: [1, 2, 3, 4, 5, 6, 7], start_time: "00:00", end_time: "24:00" })
const client = await api("POST", "/v1/clients", key, { name: "Bob" })
const start = new Date(Math.ceil(Date.now() / 86_400_000) * 86_400_000 + 86_400_000 + 3 * 3_600_000).toISOString().replace(".000Z", "Z")
const booking = await api("POST", "/v1/bookings", key, { service_id: service.id, staff_id: staff.id, client_id: client.id, start })
const subscribed = await api("POST", `/v1/staff/${staff.id}/calendars`, key, { url: feedUrl })
const syncRoute = `/v1/staff/${staff.id}/calendars/${subscribed.id}/sync`

const load = () =>
  autocannon({ url: `${url}/v1/bookings/${booking.id}`, duration: SECONDS, connections: CONNECTIONS, headers: { authorization: `Bearer ${key}` } })

/** Syncs the feed back to back until `until` settles; each sync's time in ms. */
const syncLoop = async (until: Promise<unknown>) => {
  let done = false
  void until.then(() => (done = true))
  const times: Array<number> = []
  let events = 0
  while (!done) {
    const t0 = performance.now()
    const synced = await api("POST", syncRoute, key)
    if (synced.status !== "synced") throw new Error(`sync failed: ${synced.last_error}`)
    times.push(performance.now() - t0)
    events = synced.event_count
  }
  return { times, events }
}

// Warm: the first sync (which stores every range) and a short load.
const firstT0 = performance.now()
const first = await api("POST", syncRoute, key)
const firstMs = performance.now() - firstT0
if (first.status !== "synced") throw new Error(`sync failed: ${first.last_error}`)
await autocannon({ url: `${url}/v1/bookings/${booking.id}`, duration: 1, connections: CONNECTIONS, headers: { authorization: `Bearer ${key}` } })

const idle = await load()
const busyLoad = load()
const syncs = await syncLoop(busyLoad)
const busy = await busyLoad

const row = (name: string, r: any) =>
  `  ${name.padEnd(12)} p50 ${String(r.latency.p50).padStart(4)} ms  p99 ${String(r.latency.p99).padStart(4)} ms  max ${String(r.latency.max).padStart(4)} ms  ${Math.round(r.requests.average)} req/s  errors ${r.non2xx + r.errors}`
console.log(`GET /v1/bookings/{id} (${CONNECTIONS} connections, ${SECONDS} s each), feed ${(feed.text.length / 1024 / 1024).toFixed(2)} MB, ${first.event_count} busy occurrences`)
console.log(row("idle", idle))
console.log(row("during sync", busy))
console.log(`  p99 ratio    ${(busy.latency.p99 / Math.max(1, idle.latency.p99)).toFixed(2)}  (target ≤ 2)`)
console.log(`  first sync   ${firstMs.toFixed(0)} ms (fetch, parse, store every range; target < 1000 ms)`)
console.log(`  syncs under load: ${syncs.times.length}, median ${median(syncs.times).toFixed(0)} ms, max ${Math.max(...syncs.times).toFixed(0)} ms`)

child?.kill("SIGTERM")
feedServer.close()
