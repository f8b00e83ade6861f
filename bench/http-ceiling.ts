/**
 * The request path against its ceilings, printed (not asserted). Run: `npx tsx bench/http-ceiling.ts`
 * (BENCH_ROUNDS, BENCH_SECONDS to change the length; about two and a half minutes by default; BENCH_CAPS to try
 * other node flags in place of the bin's heap caps; `BENCH_CAPS=""` runs every server without them).
 * Each server runs in its own process, loaded with autocannon (10 connections), the
 * contestants interleaved in rounds whose order turns, compared by medians:
 *
 * Each contestant's server CPU time per request is printed beside its req/s, in all and on its
 * main thread alone (a node server's requests per second are bound by its main thread; the
 * rest is the garbage collector's helper threads and the checkpoint worker).
 *
 * - `GET /v1/bookings/{id}`: `slotwise serve` (SQLite, started as users start it, heap
 *   capped; the read takes the direct lane, and again with a query string, which sends it
 *   through the full pipeline and HttpApi) against a no-op `HttpApi` endpoint on the same
 *   stack (@effect/platform on node:http, tracing off, same node flags) returning a small
 *   booking; bare node:http for scale. A list page of 20 and a day of slots beside them.
 * - `POST /v1/bookings` against a no-op `HttpApi` POST decoding the same four-field body (the
 *   stack's own ceiling for a create), and against bench/baseline-server.ts (node:http +
 *   better-sqlite3 doing the same work with nothing else); its p99 at 32 connections. The
 *   creates book a staff member and service of their own, a booking every half hour, so
 *   the day of slots and the staff member whose page is listed stay as they were set up.
 * - A POST refused by its payload schema (no storage) against that no-op POST, by server CPU.
 * - Creates and the no-op POST at 2 and 32 connections too, compared by main-thread CPU at
 *   each: a create's share of its group's COMMIT and of waking its client shrink as more
 *   requests arrive at once.
 * - Peak RSS of the capped server under this load.
 */
import { type ChildProcess, spawnSync } from "node:child_process"
import * as fs from "node:fs"
import { createServer } from "node:http"
import { createRequire } from "node:module"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { HttpApi, HttpApiBuilder, HttpApiEndpoint, HttpApiGroup, HttpMiddleware } from "@effect/platform"
import { NodeHttpServer, NodeRuntime } from "@effect/platform-node"
import { Effect, Layer, Schema } from "effect"
import { call } from "./httpCall.js"
import { median } from "./rounds.js"
import {
  benchAccount,
  BIN_CAPS,
  bookable,
  cpuOf,
  createsAt,
  halfHour as slot,
  mainThreadCpuOf,
  nodeFlags,
  rssOf,
  startServer
} from "./servers.js"

const body = { id: "bkg_01", object: "booking", start: "2027-01-01T10:00:00Z", status: "confirmed", metadata: {} }
const mode = process.argv[2]

if (mode === "bare") {
  const text = JSON.stringify(body)
  createServer((_, res) => {
    res.writeHead(200, { "content-type": "application/json" })
    res.end(text)
  }).listen(0, "127.0.0.1", function(this: any) {
    process.stdout.write(`port ${this.address().port}\n`)
  })
} else if (mode === "httpapi") {
  const Booking = Schema.Struct({
    id: Schema.String,
    object: Schema.Literal("booking"),
    start: Schema.String,
    status: Schema.String,
    metadata: Schema.Record({ key: Schema.String, value: Schema.String })
  })
  // What a create posts, as plain strings: the stack's own cost of a JSON body, not our rules.
  const Create = Schema.Struct({ service_id: Schema.String, staff_id: Schema.String, client_id: Schema.String, start: Schema.String })
  const Api = HttpApi.make("ceiling").add(
    HttpApiGroup.make("g")
      .add(HttpApiEndpoint.get("get", "/v1/bookings/:id").setPath(Schema.Struct({ id: Schema.String })).addSuccess(Booking))
      .add(HttpApiEndpoint.post("create", "/v1/bookings").setPayload(Create).addSuccess(Booking, { status: 201 }))
  )
  const Handlers = HttpApiBuilder.group(Api, "g", (h) =>
    h
      .handle("get", ({ path }) => Effect.succeed({ ...body, id: path.id, object: "booking" as const }))
      .handle("create", ({ payload }) => Effect.succeed({ ...body, start: payload.start, object: "booking" as const })))
  const server = createServer()
  server.on("listening", () => process.stdout.write(`port ${(server.address() as any).port}\n`))
  NodeRuntime.runMain(Layer.launch(
    HttpApiBuilder.serve().pipe(
      Layer.provide(HttpApiBuilder.api(Api).pipe(Layer.provide(Handlers))),
      HttpMiddleware.withTracerDisabledWhen(() => true),
      Layer.provide(NodeHttpServer.layer(() => server, { port: 0, host: "127.0.0.1" }))
    )
  ))
} else {
  await compare()
  process.exit(0)
}

async function compare() {
  const autocannon = createRequire(import.meta.url)("autocannon") as (options: any) => Promise<any>
  const self = fileURLToPath(import.meta.url)
  const root = path.resolve(path.dirname(self), "..")
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "slotwise-ceiling-"))
  const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3)
  const SECONDS = Number(process.env.BENCH_SECONDS ?? 3)
  const CAPS = nodeFlags(process.env.BENCH_CAPS ?? BIN_CAPS.join(" "))
  const ADMIN = "bench-admin-token"
  const children: Array<ChildProcess> = []
  process.on("exit", () => {
    children.forEach((c) => c.kill("SIGKILL"))
    fs.rmSync(dir, { recursive: true, force: true })
  })

  const start = (args: ReadonlyArray<string>) => startServer(args, { cwd: root, children })

  // Build (tsc + bundle) outside the timing, as the first `npm start` would.
  spawnSync(process.execPath, ["bin/slotwise.js", "--version"], { cwd: root, stdio: "ignore" })

  /**
   * A Slotwise server with an account, a bookable service and one booking; and a second
   * staff member with a service of their own for the creates, so the tens of thousands they
   * book never reach the day of slots read or the staff member whose bookings are listed.
   */
  const slotwise = async (flags: ReadonlyArray<string>, name: string) => {
    const server = await start([
      ...flags,
      "bin/slotwise.js",
      "serve",
      "--port",
      "0",
      "--database",
      path.join(dir, `${name}.db`),
      "--admin-token",
      ADMIN
    ])
    const key = await benchAccount(server.url, ADMIN)
    const read = await bookable(server.url, key, "Ana", "Cut")
    const creates = await bookable(server.url, key, "Bea", "Colour")
    const client = await call(`${server.url}/v1/clients`, "POST", key, { name: "Bob" })
    const booking = await call(`${server.url}/v1/bookings`, "POST", key, {
      service_id: read.service,
      staff_id: read.staff,
      client_id: client.id,
      start: slot(0)
    })
    return { ...server, key, ...read, client: client.id, booking: booking.id, creates: { ...creates, client: client.id } }
  }

  const capped = await slotwise(CAPS, "capped")
  // A list page of 20 needs 20 bookings from the start (the creates below add more).
  for (let i = 1; i <= 20; i++) {
    await call(`${capped.url}/v1/bookings`, "POST", capped.key, {
      service_id: capped.service,
      staff_id: capped.staff,
      client_id: capped.client,
      start: slot(80_000 + i)
    })
  }
  const noop = await start([...CAPS, "--import", "tsx", self, "httpapi"])
  const bare = await start([...CAPS, "--import", "tsx", self, "bare"])
  const baseline = await start([...CAPS, "--import", "tsx", "bench/baseline-server.ts", path.join(dir, "baseline.db"), capped.key])

  // Each target books its own run of slots (five years of half hours, within the service's
  // booking horizon), so no POST is refused for a taken slot or a start too far ahead.
  const [baselineCreates, noopCreates, cappedCreates] = [baseline, noop, capped].map((target) => createsAt(target.url, capped.creates, 11))
  const refusedPost = (target: typeof capped, start: string) => ({
    url: `${target.url}/v1/bookings`,
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ service_id: target.service, staff_id: target.staff, client_id: target.client, start })
  })
  // A day of slots with no bookings, well inside the service's horizon.
  const slotsDay = slot(40_000).slice(0, 10)
  const contestants: ReadonlyArray<{ readonly name: string; readonly pid: number; readonly options: any; readonly refusals?: boolean }> = [
    { name: "GET bare node:http", pid: bare.pid, options: { url: `${bare.url}/v1/bookings/bkg_01` } },
    { name: "GET no-op HttpApi", pid: noop.pid, options: { url: `${noop.url}/v1/bookings/bkg_01` } },
    { name: "GET slotwise", pid: capped.pid, options: { url: `${capped.url}/v1/bookings/${capped.booking}` } },
    // A query string sends the same read through the full pipeline and HttpApi, not the direct lane.
    { name: "GET slotwise via HttpApi", pid: capped.pid, options: { url: `${capped.url}/v1/bookings/${capped.booking}?` } },
    { name: "GET slotwise list of 20", pid: capped.pid, options: { url: `${capped.url}/v1/bookings?limit=20&staff_id=${capped.staff}` } },
    {
      name: "GET slotwise slots, one day",
      pid: capped.pid,
      options: {
        url: `${capped.url}/v1/availability/slots?service_id=${capped.service}&start=${slotsDay}T00:00:00Z&end=${slotsDay}T23:59:59Z`
      }
    },
    { name: "POST baseline", pid: baseline.pid, options: baselineCreates },
    { name: "POST no-op HttpApi", pid: noop.pid, options: noopCreates },
    { name: "POST slotwise", pid: capped.pid, options: cappedCreates },
    { name: "POST slotwise, 32 connections", pid: capped.pid, options: { ...cappedCreates, connections: 32 } },
    // A create's share of its group's COMMIT and of waking its client shrink as more arrive at
    // once: the ratio by concurrency, each side at the same number of connections.
    { name: "POST no-op HttpApi, 32 connections", pid: noop.pid, options: { ...noopCreates, connections: 32 } },
    { name: "POST slotwise, 2 connections", pid: capped.pid, options: { ...cappedCreates, connections: 2 } },
    { name: "POST no-op HttpApi, 2 connections", pid: noop.pid, options: { ...noopCreates, connections: 2 } },
    // Where a create's time goes: a POST refused by its payload schema has passed the pipeline,
    // the body step and its decoding, and touched no storage.
    { name: "POST slotwise, 422 bad start", pid: capped.pid, options: refusedPost(capped, "not a time"), refusals: true }
  ]
  const rps = contestants.map((): Array<number> => [])
  // Server CPU per request: steadier than req/s on a shared machine (load slows both alike).
  const cpu = contestants.map((): Array<number> => [])
  const mainCpu = contestants.map((): Array<number> => [])
  const p99 = contestants.map((): Array<number> => [])
  const peak = new Map<number, number>()
  for (let round = 0; round < ROUNDS; round++) {
    for (let k = 0; k < contestants.length; k++) {
      const i = (round + k) % contestants.length
      const c = contestants[i]!
      const headers = { ...c.options.headers, authorization: `Bearer ${capped.key}` }
      const sampler = setInterval(() => peak.set(c.pid, Math.max(peak.get(c.pid) ?? 0, rssOf(c.pid))), 100)
      const cpu0 = cpuOf(c.pid)
      const main0 = mainThreadCpuOf(c.pid)
      const result = await autocannon({ connections: 10, duration: SECONDS, ...c.options, headers })
      cpu[i]!.push((cpuOf(c.pid) - cpu0) / result.requests.total)
      mainCpu[i]!.push((mainThreadCpuOf(c.pid) - main0) / result.requests.total)
      clearInterval(sampler)
      if ((c.refusals === true ? 0 : result.non2xx) + result.errors > 0)
        console.log(`  (${c.name}: ${result.non2xx} non-2xx, ${result.errors} errors)`)
      rps[i]!.push(result.requests.average)
      p99[i]!.push(result.latency.p99)
    }
  }
  const m = rps.map((xs) => median(xs))
  console.log(
    `\nautocannon: 10 connections, ${SECONDS} s × ${ROUNDS} interleaved rounds, medians; ${os.cpus().length} cores, node ${process.version}\n`
  )
  const mc = cpu.map((xs) => median(xs))
  const mm = mainCpu.map((xs) => median(xs))
  contestants.forEach((c, i) =>
    console.log(
      `${c.name.padEnd(30)} ${m[i]!.toFixed(0).padStart(7)} req/s  (${rps[i]!.map((x) => x.toFixed(0)).join(", ")})  ` +
        `${mc[i]!.toFixed(0).padStart(4)} server CPU µs/request, ${mm[i]!.toFixed(0).padStart(4)} on its main thread`
    )
  )
  // By name, so adding a contestant does not shift the comparisons.
  const at = (name: string) => {
    const i = contestants.findIndex((c) => c.name === name)
    if (i < 0) throw new Error(`no contestant ${name}`)
    return i
  }
  const req = (name: string) => m[at(name)]!
  const cpuPer = (name: string) => mc[at(name)]!
  const mainPer = (name: string) => mm[at(name)]!
  const ratio = (a: string, b: string) => req(a) / req(b)
  const cpuRatio = (a: string, b: string) => cpuPer(a) / cpuPer(b)
  const read = ratio("GET slotwise", "GET no-op HttpApi")
  const create = ratio("POST slotwise", "POST no-op HttpApi")
  const refused = cpuRatio("POST slotwise, 422 bad start", "POST no-op HttpApi")
  const viaApi = ratio("GET slotwise via HttpApi", "GET no-op HttpApi")
  const verdict = (ok: boolean) => (ok ? "ok" : "MISSED")
  const [one, five] = os.loadavg()
  console.log("")
  console.log(`load average at the end: ${one!.toFixed(2)} (1 min), ${five!.toFixed(2)} (5 min)`)
  console.log(
    `POST /v1/bookings / no-op HttpApi POST:      ${create.toFixed(2)}× by req/s (target ≥ 0.5) ${verdict(create >= 0.5)}; ` +
      `${cpuPer("POST slotwise").toFixed(0)} µs against ${cpuPer("POST no-op HttpApi").toFixed(0)} µs of server CPU; ` +
      `${mainPer("POST slotwise").toFixed(0)} against ${mainPer("POST no-op HttpApi").toFixed(0)} µs on the main thread ` +
      `(${(mainPer("POST no-op HttpApi") / mainPer("POST slotwise")).toFixed(2)}×)`
  )
  console.log(
    `POST refused by its schema / no-op POST:     ${refused.toFixed(2)}× by server CPU per request (target ≤ 1.3) ${
      verdict(refused <= 1.3)
    }; ` +
      `${cpuPer("POST slotwise, 422 bad start").toFixed(0)} µs`
  )
  console.log(
    `GET /v1/bookings/{id} / no-op HttpApi GET:   ${read.toFixed(2)}× by req/s (target ≥ 0.75) ${verdict(read >= 0.75)}; ` +
      `${cpuRatio("GET no-op HttpApi", "GET slotwise").toFixed(2)}× by server CPU (${cpuPer("GET slotwise").toFixed(0)} against ${
        cpuPer("GET no-op HttpApi").toFixed(0)
      } µs)`
  )
  console.log(`  the same read through HttpApi:             ${viaApi.toFixed(2)}× (${cpuPer("GET slotwise via HttpApi").toFixed(0)} µs)`)
  console.log(
    `GET /v1/bookings?limit=20 / no-op GET:       ${ratio("GET slotwise list of 20", "GET no-op HttpApi").toFixed(2)}× (${
      cpuPer("GET slotwise list of 20").toFixed(0)
    } µs)`
  )
  console.log(
    `GET slots (one day, 48 starts) / no-op GET:  ${ratio("GET slotwise slots, one day", "GET no-op HttpApi").toFixed(2)}× (${
      cpuPer("GET slotwise slots, one day").toFixed(0)
    } µs)`
  )
  console.log(
    `POST /v1/bookings / baseline (node:http + better-sqlite3): ${ratio("POST slotwise", "POST baseline").toFixed(2)}×; ` +
      `no-op HttpApi POST / baseline ${ratio("POST no-op HttpApi", "POST baseline").toFixed(2)}×; no-op GET / bare node:http ${
        ratio("GET no-op HttpApi", "GET bare node:http").toFixed(2)
      }×`
  )
  const atConnections = (name: string, connections: number) => (connections === 10 ? name : `${name}, ${connections} connections`)
  const byConnections = [2, 10, 32].map((connections) => {
    const [ours, noop] = [atConnections("POST slotwise", connections), atConnections("POST no-op HttpApi", connections)]
    return `${(mainPer(noop) / mainPer(ours)).toFixed(2)}× (${mainPer(ours).toFixed(0)} against ${mainPer(noop).toFixed(0)} µs)`
  })
  console.log(`POST /v1/bookings / no-op POST by main-thread CPU at 2 / 10 / 32 connections: ${byConnections.join(" / ")}`)
  console.log(
    `creates at 32 connections: p99 ${median(p99[at("POST slotwise, 32 connections")]!).toFixed(0)} ms ` +
      `(${req("POST slotwise, 32 connections").toFixed(0)} req/s); at 10: p99 ${median(p99[at("POST slotwise")]!).toFixed(0)} ms`
  )
  console.log(
    `peak RSS under load with the heap caps: ${peak.get(capped.pid)!.toFixed(0)} MB (target < 200 MB) ${
      verdict(peak.get(capped.pid)! < 200)
    }`
  )
}
