/**
 * HTTP benchmark: Slotwise (`slotwise serve` on a SQLite file) against a minimal node:http +
 * better-sqlite3 server doing the same work (bench/baseline-server.ts), side by side, with
 * autocannon on loopback. Prints req/s and p99 per call, the ratios, the server's peak RSS
 * under load and the time from spawn to ready. Bounded: about a minute in all.
 * Run: npx tsx bench/http.ts
 */
import { type ChildProcess, spawnSync } from "node:child_process"
import * as fs from "node:fs"
import { createRequire } from "node:module"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { call } from "./httpCall.js"
import { benchAccount, BIN_CAPS, createsAt, halfHour as slot, rssOf, startServer } from "./servers.js"

const autocannon = createRequire(import.meta.url)("autocannon") as (options: any) => Promise<any>
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..")
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "slotwise-bench-"))
const DURATION = Number(process.env.BENCH_SECONDS ?? 5)
const CONNECTIONS = 10
const ADMIN = "bench-admin-token"
const children: Array<ChildProcess> = []
const cleanup = () => {
  for (const c of children) if (c.exitCode === null) c.kill("SIGKILL")
  fs.rmSync(dir, { recursive: true, force: true })
}
process.on("exit", cleanup)

const start = (args: ReadonlyArray<string>) => startServer(args, { cwd: root, children })

interface Target {
  readonly name: string
  readonly url: string
  readonly pid: number
  readonly key: string
  readonly staff: string
  readonly service: string
  readonly client: string
  readonly booking: string
}

const run = async (target: Target, scenario: string, options: any) => {
  let peak = 0
  const sampler = setInterval(() => (peak = Math.max(peak, rssOf(target.pid))), 200)
  const result = await autocannon({
    duration: DURATION,
    connections: CONNECTIONS,
    headers: { authorization: `Bearer ${target.key}` },
    ...options
  })
  clearInterval(sampler)
  const errors = result.non2xx + result.errors
  return { scenario, rps: result.requests.average, p99: result.latency.p99, errors, peak }
}

const scenarios = (t: Target, postOffset: number) => {
  const creates = createsAt(t.url, t, postOffset)
  return [
    ["GET /v1/bookings/{id}", { url: `${t.url}/v1/bookings/${t.booking}` }],
    ["GET /v1/bookings?status=confirmed&staff_id=…&limit=20", {
      url: `${t.url}/v1/bookings?status=confirmed&staff_id=${t.staff}&limit=20`
    }],
    ["POST /v1/bookings (distinct slots)", { ...creates, headers: { ...creates.headers, authorization: `Bearer ${t.key}` } }],
    ["GET /v1/availability/slots (one week)", {
      url: `${t.url}/v1/availability/slots?service_id=${t.service}&staff_id=${t.staff}&start=${slot(0)}&end=${slot(7 * 48)}`
    }]
  ] as const
}

const main = async () => {
  // Build (tsc + bundle) outside the timing, as `npm start` would on first run.
  spawnSync(process.execPath, ["bin/slotwise.js", "--version"], { cwd: root, stdio: "ignore" })

  const ours = await start([
    ...BIN_CAPS,
    "bin/slotwise.js",
    "serve",
    "--port",
    "0",
    "--database",
    path.join(dir, "slotwise.db"),
    "--admin-token",
    ADMIN
  ])
  const readyTimes = [ours.readyMs]
  // `node -e` printing the same line, interleaved with the probes: on a busy machine the
  // ratio says more than the milliseconds.
  const nodeTimes: Array<number> = []
  for (let i = 0; i < 5; i++) {
    const probe = await start([...BIN_CAPS, "bin/slotwise.js", "serve", "--port", "0", "--memory"])
    readyTimes.push(probe.readyMs)
    probe.child.kill("SIGTERM")
    const bare = await start(["-e", "console.log('listening on http://127.0.0.1:0')"])
    nodeTimes.push(bare.readyMs)
  }
  const key = await benchAccount(ours.url, ADMIN)

  const staff = await call(`${ours.url}/v1/staff`, "POST", key, { name: "Ana", time_zone: "UTC" })
  const service = await call(`${ours.url}/v1/services`, "POST", key, { name: "Cut", duration_minutes: 30, staff_ids: [staff.id] })
  await call(`${ours.url}/v1/availability`, "POST", key, {
    staff_id: staff.id,
    type: "weekly",
    weekdays: [1, 2, 3, 4, 5, 6, 7],
    start_time: "00:00",
    end_time: "24:00"
  })
  const client = await call(`${ours.url}/v1/clients`, "POST", key, { name: "Bob" })
  const baseline = await start(["--import", "tsx", "bench/baseline-server.ts", path.join(dir, "baseline.db"), key])

  const SEEDED = 200
  let oursBooking = ""
  let baseBooking = ""
  for (let i = 0; i < SEEDED; i++) {
    const body = { service_id: service.id, staff_id: staff.id, client_id: client.id, start: slot(i * 3) }
    const a = await call(`${ours.url}/v1/bookings`, "POST", key, body)
    const b = await call(`${baseline.url}/v1/bookings`, "POST", key, body)
    if (i === 0) [oursBooking, baseBooking] = [a.id, b.id]
  }

  const targets: Array<Target> = [
    {
      name: "slotwise",
      url: ours.url,
      pid: ours.child.pid!,
      key,
      staff: staff.id,
      service: service.id,
      client: client.id,
      booking: oursBooking
    },
    {
      name: "baseline",
      url: baseline.url,
      pid: baseline.child.pid!,
      key,
      staff: staff.id,
      service: service.id,
      client: client.id,
      booking: baseBooking
    }
  ]
  const results: Record<string, Array<Awaited<ReturnType<typeof run>>>> = { slotwise: [], baseline: [] }
  const perTarget = targets.map((t) => scenarios(t, SEEDED * 3 + 10))
  for (let s = 0; s < perTarget[0]!.length; s++) {
    for (let t = 0; t < targets.length; t++) {
      const [scenario, options] = perTarget[t]![s]!
      // Warm up briefly, then measure.
      await autocannon({
        ...options,
        duration: 1,
        connections: CONNECTIONS,
        headers: { ...(options as any).headers, authorization: `Bearer ${key}` }
      })
      results[targets[t]!.name]!.push(await run(targets[t]!, scenario, options))
    }
  }

  const line = (cells: Array<string>) => console.log(cells.map((c, i) => (i === 0 ? c.padEnd(52) : c.padStart(i === 6 ? 16 : 12))).join(""))
  console.log(
    `\nautocannon: ${CONNECTIONS} connections, ${DURATION} s per call, loopback; ${os.cpus().length} cores, node ${process.version}\n`
  )
  line(["call", "slotwise r/s", "p99 ms", "base r/s", "p99 ms", "ratio", "target"])
  for (let s = 0; s < results.slotwise!.length; s++) {
    const ours = results.slotwise![s]!
    const base = results.baseline![s]!
    const target = ours.scenario.startsWith("POST") ? 0.4 : 0.5
    const ratio = ours.rps / base.rps
    line([
      ours.scenario,
      ours.rps.toFixed(0),
      String(ours.p99),
      base.rps.toFixed(0),
      String(base.p99),
      ratio.toFixed(2),
      `≥ ${target} ${ratio >= target ? "ok" : "MISSED"}`
    ])
    if (ours.errors > 0 || base.errors > 0) console.log(`  (non-2xx or errors: slotwise ${ours.errors}, baseline ${base.errors})`)
  }
  const peak = Math.max(...results.slotwise!.map((r) => r.peak))
  console.log(`\nslotwise peak RSS under load: ${peak.toFixed(0)} MB (target < 200 MB) ${peak < 200 ? "ok" : "MISSED"}`)
  const median = (xs: ReadonlyArray<number>) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
  const memoryReady = median(readyTimes.slice(1))
  console.log(
    `spawn → "listening on": ${readyTimes.map((t) => `${t.toFixed(0)} ms`).join(", ")} (SQLite file, then memory ×${readyTimes.length - 1})`
  )
  console.log(
    `  memory median ${memoryReady.toFixed(0)} ms; node -e median ${median(nodeTimes).toFixed(0)} ms; ratio ${
      (memoryReady / median(nodeTimes)).toFixed(1)
    }× (target < 500 ms on a quiet machine) ${memoryReady < 500 ? "ok" : "MISSED"}`
  )
  for (const t of targets) {
    const child = children.find((c) => c.pid === t.pid)
    child?.kill("SIGTERM")
  }
}

main().then(
  () => process.exit(0),
  (error) => {
    console.error(error)
    process.exit(1)
  }
)
