/**
 * The workers' scans across tenants on SQLite, with and without their indexes across tenants:
 * CPU per scan (process.cpuUsage, in process) over tables holding other tenants' rows, none
 * of them due. One file made with the specs as they were (tenant-first indexes only), one
 * with today's; each scan is timed on both in interleaved rounds, medians compared. Then the
 * price on the busiest of those tables: CPU per queued delivery written and removed.
 *
 * Run: npx tsx bench/acrossTenantScans.ts [--rows 5000] [--rounds 15] [--calls 200]
 */
import { Effect, Layer, ManagedRuntime } from "effect"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { SqliteStorageLive } from "../adapters/sqlite/layer.js"
import { CalendarsCollection } from "../src/calendars/collections.js"
import { OAuthGrantsCollection } from "../src/oauth/collections.js"
import { type CollectionSpec, type ListQuery, Storage } from "../src/ports/storage.js"
import { Tenant, type TenantId } from "../src/ports/tenant.js"
import { WebhookEndpointsCollection, WebhookQueueCollection } from "../src/webhooks/collections.js"
import { median } from "./rounds.js"

const args = process.argv.slice(2)
const option = (name: string, fallback: number) => {
  const i = args.indexOf(`--${name}`)
  return i >= 0 && args[i + 1] !== undefined ? Number(args[i + 1]) : fallback
}
const ROWS = option("rows", 5000)
const ROUNDS = option("rounds", 15)
const CALLS = option("calls", 200)

const NOW = Date.now()
const TENANTS = Math.max(1, Math.floor(ROWS / 5))
const tenantOf = (n: number): TenantId => ({ account_id: `acc_${String(n % TENANTS).padStart(26, "0")}`, environment: "production" })

interface Scan {
  readonly name: string
  readonly spec: CollectionSpec<any>
  /** The spec before it had indexes across tenants. */
  readonly before: CollectionSpec<any>
  readonly query: ListQuery
  readonly doc: (n: number) => { readonly id: string }
}

const without = (spec: CollectionSpec<any>, changes: Partial<CollectionSpec<any>> = {}): CollectionSpec<any> => {
  const { acrossTenantIndexes: _, ...rest } = spec
  return { ...rest, ...changes }
}

const queued = (n: number) => ({ id: `whd_${n}`, due_ms: NOW + 60_000 + n, webhook_id: `wh_${n % 7}` })
const scans: ReadonlyArray<Scan> = [
  {
    name: "webhook dispatcher idle poll: next due",
    spec: WebhookQueueCollection,
    before: without(WebhookQueueCollection),
    query: { where: [{ column: "due_ms", op: "lte", value: NOW }], limit: 1 },
    doc: queued
  },
  {
    name: "webhook dispatcher idle poll: next later",
    spec: WebhookQueueCollection,
    before: without(WebhookQueueCollection),
    query: { where: [{ column: "due_ms", op: "gt", value: NOW }], limit: 1 },
    doc: queued
  },
  {
    name: "fan-out after a commit: any active endpoint",
    spec: WebhookEndpointsCollection,
    before: without(WebhookEndpointsCollection),
    query: { where: [{ column: "active", op: "eq", value: 1 }], limit: 1 },
    // Most tenants' endpoints disabled: the scan must look past them.
    doc: (n) => ({ id: `wh_${n}`, active: n % 50 === 49 })
  },
  {
    name: "calendar sync idle poll: any due",
    spec: CalendarsCollection,
    before: without(CalendarsCollection, { storageIndexes: [["staff_id"], ["due_ms"]] }),
    query: { where: [{ column: "due_ms", op: "lte", value: NOW }], limit: 1 },
    doc: (n) => ({ id: `cal_${n}`, staff_id: `st_${n}`, due_ms: NOW + 60_000 + n })
  },
  {
    name: "user deleted: its grants in every tenant",
    spec: OAuthGrantsCollection,
    before: without(OAuthGrantsCollection),
    query: { where: [{ column: "user_id", op: "eq", value: "usr_7" }] },
    doc: (n) => ({ id: `gr_${n}`, client_id: `cl_${n % 13}`, user_id: `usr_${n % (ROWS / 2)}` })
  }
]

const dir = mkdtempSync(join(tmpdir(), "slotwise-bench-scans-"))
const open = (name: string) => ManagedRuntime.make(Layer.fresh(SqliteStorageLive({ filename: join(dir, `${name}.db`) })))
const before = open("before")
const after = open("after")

const fill = (runtime: typeof before, spec: CollectionSpec<any>, doc: Scan["doc"]) =>
  runtime.runPromise(Effect.flatMap(Storage, (storage) =>
    storage.transaction(Effect.forEach(
      Array.from({ length: ROWS }, (_, n) => n),
      (n) => Effect.provideService(storage.collection(spec).insert(doc(n)), Tenant, tenantOf(n)),
      { discard: true }
    ))))

/** CPU µs per scan over `CALLS` scans. */
const cpuPerScan = async (runtime: typeof before, spec: CollectionSpec<any>, query: ListQuery) => {
  const scan = Effect.flatMap(Storage, (storage) => storage.collection(spec).listAcrossTenants(query))
  const run = Effect.repeatN(scan, CALLS - 1)
  const start = process.cpuUsage()
  await runtime.runPromise(run)
  const used = process.cpuUsage(start)
  return (used.user + used.system) / CALLS
}

const filled = new Set<CollectionSpec<any>>()
console.log(
  `Scans across tenants, SQLite: ${ROWS} rows in ${TENANTS} tenants, none due; CPU µs per scan, median of ${ROUNDS} rounds × ${CALLS}`
)
for (const scan of scans) {
  if (!filled.has(scan.spec)) {
    filled.add(scan.spec)
    await fill(before, scan.before, scan.doc)
    await fill(after, scan.spec, scan.doc)
  }
  const found = await Promise.all(
    [before, after].map((runtime, i) =>
      runtime.runPromise(
        Effect.flatMap(Storage, (storage) => storage.collection(i === 0 ? scan.before : scan.spec).listAcrossTenants(scan.query))
      )
    )
  )
  if (JSON.stringify(found[0]) !== JSON.stringify(found[1])) throw new Error(`${scan.name}: the two files answer differently`)
  const times: [Array<number>, Array<number>] = [[], []]
  for (let round = 0; round < ROUNDS; round++) {
    for (let k = 0; k < 2; k++) {
      const i = (round + k) % 2
      times[i]!.push(await cpuPerScan(i === 0 ? before : after, i === 0 ? scan.before : scan.spec, scan.query))
    }
  }
  const [was, now] = times.map(median) as [number, number]
  console.log(
    `  ${scan.name.padEnd(46)} before ${was.toFixed(1).padStart(8)} µs  after ${now.toFixed(1).padStart(6)} µs  ${
      (was / now).toFixed(1)
    }× less (${found[0]!.length} rows)`
  )
}
// The price: a queued delivery is written twice (queued, then removed once sent), each write
// now keeping one index more up to date.
const BATCH = 500
let written = 0
const writeCpu = async (runtime: typeof before, spec: CollectionSpec<any>) => {
  const ids = Array.from({ length: BATCH }, (_, n) => ({ ...queued(n), id: `whd_w${written++}` }))
  const start = process.cpuUsage()
  await runtime.runPromise(Effect.flatMap(Storage, (storage) => {
    const c = storage.collection(spec)
    const tenant = tenantOf(written)
    return Effect.zipRight(
      storage.transaction(Effect.forEach(ids, (doc) => c.insert(doc), { discard: true })),
      storage.transaction(Effect.forEach(ids, (doc) => c.remove(doc.id), { discard: true }))
    ).pipe(Effect.provideService(Tenant, tenant))
  }))
  const used = process.cpuUsage(start)
  return (used.user + used.system) / BATCH
}
const queueBefore = scans[0]!.before
const writes: [Array<number>, Array<number>] = [[], []]
for (let round = 0; round < ROUNDS; round++) {
  for (let k = 0; k < 2; k++) {
    const i = (round + k) % 2
    writes[i]!.push(await writeCpu(i === 0 ? before : after, i === 0 ? queueBefore : WebhookQueueCollection))
  }
}
const [wroteBefore, wroteAfter] = writes.map(median) as [number, number]
console.log(
  `  ${"webhook queue: a delivery queued, then removed".padEnd(46)} before ${wroteBefore.toFixed(1).padStart(8)} µs  after ${
    wroteAfter.toFixed(1).padStart(6)
  } µs  ${(wroteAfter / wroteBefore).toFixed(2)}× (per row, in batches of ${BATCH})`
)

await before.dispose()
await after.dispose()
rmSync(dir, { recursive: true, force: true })
