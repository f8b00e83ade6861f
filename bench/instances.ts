/**
 * One instance against two on the same PostgreSQL database: requests per second for reads
 * (`GET /v1/bookings/{id}`) and booking creations, with autocannon on loopback. Both
 * instances run throughout; "one" sends every request to the first, "two" splits the
 * connections between them. Creations rotate over four accounts (a tenant's writes are
 * serialized by its lock, so one tenant would measure that lock, not the instances), each
 * request a new free slot. Configurations alternate within each round; medians over rounds.
 * Also printed: the load generator's share of the machine's CPU (autocannon runs in this
 * process), since on a small machine it competes with the servers it measures.
 * Run: npx tsx bench/instances.ts  (BENCH_SECONDS, BENCH_ROUNDS; PostgreSQL at
 * SLOTWISE_TEST_POSTGRES_URL, in a database of its own that is dropped at the end)
 */
import { type ChildProcess, spawn } from "node:child_process"
import { createRequire } from "node:module"
import * as os from "node:os"
import * as path from "node:path"
import * as readline from "node:readline"
import { fileURLToPath } from "node:url"
import { createTestDatabase } from "../test/postgres/database.js"
import { median } from "./rounds.js"

const autocannon = createRequire(import.meta.url)("autocannon") as (options: any) => Promise<any>
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..")
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5)
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3)
const CONNECTIONS = 16
const ADMIN = "bench-admin-token"
const children: Array<ChildProcess> = []
process.on("exit", () => {
  for (const c of children) if (c.exitCode === null) c.kill("SIGKILL")
})

const start = (database: string): Promise<string> =>
  new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [
      "--import",
      "tsx",
      "main.ts",
      "serve",
      "--port",
      "0",
      "--database",
      database,
      "--admin-token",
      ADMIN
    ], {
      cwd: root,
      stdio: ["ignore", "pipe", "inherit"],
      env: { ...process.env, SLOTWISE_REDIS_URL: "", SLOTWISE_DATABASE_URL: "" }
    })
    children.push(child)
    readline.createInterface({ input: child.stdout! }).on("line", (line) => {
      const m = /^listening on (http:\/\/\S+)$/.exec(line)
      if (m) resolve(m[1]!)
    })
    child.on("exit", (code) => reject(new Error(`serve exited ${code}`)))
  })

const call = async (url: string, method: string, key: string, body?: unknown) => {
  const response = await fetch(url, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) })
  })
  const json = await response.json() as any
  if (!response.ok) throw new Error(`${method} ${url}: ${response.status} ${JSON.stringify(json)}`)
  return json
}

interface Tenant {
  readonly key: string
  readonly service: string
  readonly staff: string
  readonly client: string
}

/** An account without a practical rate limit, with a staff member free every day 00:00–23:30 UTC. */
const tenant = async (url: string): Promise<Tenant> => {
  const created = await call(`${url}/admin/v1/accounts`, "POST", ADMIN, {
    name: "Bench",
    plan: "business",
    rate_limit_per_minute: 1_000_000
  })
  const key = created.keys.sandbox.secret as string
  const staff = await call(`${url}/v1/staff`, "POST", key, { name: "Ana", time_zone: "UTC" })
  await call(`${url}/v1/availability`, "POST", key, {
    staff_id: staff.id,
    type: "weekly",
    weekdays: [1, 2, 3, 4, 5, 6, 7],
    start_time: "00:00",
    end_time: "23:30"
  })
  const service = await call(`${url}/v1/services`, "POST", key, { name: "Cut", duration_minutes: 30, staff_ids: [staff.id] })
  const client = await call(`${url}/v1/clients`, "POST", key, { name: "Bo" })
  return { key, service: service.id, staff: staff.id, client: client.id }
}

const main = async () => {
  const db = await createTestDatabase()
  try {
    const urls = [await start(db.url), await start(db.url)] as const
    const tenants = await Promise.all([0, 1, 2, 3].map(() => tenant(urls[0])))
    const first = tenants[0]!
    const booking = await call(`${urls[0]}/v1/bookings`, "POST", first.key, {
      service_id: first.service,
      staff_id: first.staff,
      client_id: first.client,
      start: new Date(Date.UTC(2027, 0, 4, 9)).toISOString()
    })
    // Creations take slots from tomorrow on, 47 a day per tenant: never the same one twice.
    const day0 = Math.ceil(Date.now() / 86_400_000) * 86_400_000
    let n = 0
    const nextCreate = () => {
      const t = tenants[n % tenants.length]!
      const i = Math.floor(n++ / tenants.length)
      const startMs = day0 + Math.floor(i / 47) * 86_400_000 + (i % 47) * 1_800_000
      return {
        method: "POST",
        headers: { authorization: `Bearer ${t.key}`, "content-type": "application/json" },
        body: JSON.stringify({ service_id: t.service, staff_id: t.staff, client_id: t.client, start: new Date(startMs).toISOString() })
      }
    }

    const run = async (targets: ReadonlyArray<string>, kind: "read" | "create") => {
      const cpu0 = process.cpuUsage()
      const t0 = performance.now()
      const results = await Promise.all(targets.map((url) =>
        autocannon({
          url: `${url}${kind === "read" ? `/v1/bookings/${booking.id}` : "/v1/bookings"}`,
          duration: SECONDS,
          connections: CONNECTIONS / targets.length,
          ...(kind === "read"
            ? { headers: { authorization: `Bearer ${first.key}` } }
            : { requests: [{ setupRequest: (req: any) => ({ ...req, ...nextCreate() }) }] })
        })
      ))
      const wall = performance.now() - t0
      const cpu = process.cpuUsage(cpu0)
      const ok = results.reduce((sum, r) => sum + r["2xx"], 0)
      const errors = results.reduce((sum, r) => sum + r.non2xx + r.errors, 0)
      return { rps: ok / (wall / 1000), errors, cpuShare: (cpu.user + cpu.system) / 1000 / wall / os.cpus().length }
    }

    const configs = [
      { name: "reads, 1 instance", targets: [urls[0]], kind: "read" },
      { name: "reads, 2 instances", targets: urls, kind: "read" },
      { name: "creates, 1 instance", targets: [urls[0]], kind: "create" },
      { name: "creates, 2 instances", targets: urls, kind: "create" }
    ] as const
    const figures = configs.map(() => ({ rps: [] as Array<number>, cpu: [] as Array<number>, errors: 0 }))
    for (let round = 0; round < ROUNDS; round++) {
      for (let k = 0; k < configs.length; k++) {
        const i = (round + k) % configs.length
        const r = await run(configs[i]!.targets, configs[i]!.kind)
        figures[i]!.rps.push(r.rps)
        figures[i]!.cpu.push(r.cpuShare)
        figures[i]!.errors += r.errors
      }
    }
    console.log(
      `\n${CONNECTIONS} connections, ${SECONDS} s per run, ${ROUNDS} rounds, ${os.cpus().length} cores, load average ${
        os.loadavg()[0]!.toFixed(1)
      }`
    )
    console.log("| configuration | 2xx req/s (median) | rounds | non-2xx | load generator CPU share |")
    console.log("| --- | --- | --- | --- | --- |")
    configs.forEach((c, i) => {
      const f = figures[i]!
      console.log(
        `| ${c.name} | ${median(f.rps).toFixed(0)} | ${f.rps.map((x) => x.toFixed(0)).join(", ")} | ${f.errors} | ${
          (median(f.cpu) * 100).toFixed(0)
        }% |`
      )
    })
  } finally {
    for (const c of children) if (c.exitCode === null) c.kill("SIGTERM")
    await new Promise((r) => setTimeout(r, 500))
    await db.drop()
  }
}

await main()
