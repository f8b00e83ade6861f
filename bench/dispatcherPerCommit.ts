/**
 * What a webhook dispatcher costs each commit on PostgreSQL when nobody listens: CPU
 * (process.cpuUsage, in process) and statements per commit (a client created, then 15 ms for
 * the dispatcher's rounds), against the same commits on a storage without a dispatcher, in
 * interleaved rounds, medians. Statements are counted at `pg.Client.prototype.query`.
 *
 * Run: npx tsx bench/dispatcherPerCommit.ts (PostgreSQL at SLOTWISE_TEST_POSTGRES_URL, in a
 * database of its own that is dropped at the end)
 */
import { Effect, Layer, ManagedRuntime, Scope } from "effect"
import pg from "pg"
import { PostgresStorageLive } from "../adapters/postgres/layer.js"
import { makeDispatcher } from "../adapters/webhooks/dispatcher.js"
import { WebhookPolicyLive } from "../adapters/webhooks/guard.js"
import { Clients } from "../src/clients/Clients.js"
import { CoreLive } from "../src/layers.js"
import { Tenant, type TenantId } from "../src/ports/tenant.js"
import { createTestDatabase } from "../test/postgres/database.js"
import { median } from "./rounds.js"

let statements = 0
const original = pg.Client.prototype.query
pg.Client.prototype.query = function(this: any, ...args: Array<any>) {
  statements++
  return (original as any).apply(this, args)
} as any

const tenant: TenantId = { account_id: `acc_${"7".repeat(26)}`, environment: "sandbox" }
const db = await createTestDatabase()
// Storage stays in the context: the dispatcher subscribes to its signals from there.
const make = (schema: string) =>
  ManagedRuntime.make(
    CoreLive.pipe(
      Layer.provide(WebhookPolicyLive({ allowPrivate: true })),
      Layer.provideMerge(PostgresStorageLive({ url: db.url, schema }))
    )
  )
const withDispatcher = make("with_dispatcher")
const plain = make("plain")
const scope = await withDispatcher.runPromise(Scope.make())
await withDispatcher.runPromise(Scope.extend(makeDispatcher({ allowPrivate: true, pollIntervalMs: 60_000 }), scope))
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
let n = 0
const commits = async (runtime: typeof plain, count: number) => {
  const s0 = statements
  const c0 = process.cpuUsage()
  for (let i = 0; i < count; i++) {
    await runtime.runPromise(Effect.provideService(Effect.flatMap(Clients, (c) => c.create({ name: `Client ${n++}` })), Tenant, tenant))
    await sleep(15)
  }
  const c = process.cpuUsage(c0)
  return { cpu: (c.user + c.system) / count, statements: (statements - s0) / count }
}
await commits(withDispatcher, 50)
await commits(plain, 50)
const rows: Array<Array<{ cpu: number; statements: number }>> = [[], []]
for (let round = 0; round < 9; round++) {
  for (let k = 0; k < 2; k++) {
    const i = (round + k) % 2
    rows[i]!.push(await commits(i === 0 ? withDispatcher : plain, 60))
  }
}
const [d, p] = rows.map((xs) => ({ cpu: median(xs.map((x) => x.cpu)), statements: median(xs.map((x) => x.statements)) }))
console.log(`with dispatcher: ${d!.cpu.toFixed(0)} µs CPU, ${d!.statements} statements per commit`)
console.log(`without:         ${p!.cpu.toFixed(0)} µs CPU, ${p!.statements} statements per commit`)
console.log(
  `dispatcher's share per commit: ${(d!.cpu - p!.cpu).toFixed(0)} µs, ${(d!.statements - p!.statements).toFixed(2)} statements; ratio ${
    (d!.cpu / p!.cpu).toFixed(2)
  }`
)
await withDispatcher.dispose()
await plain.dispose()
await db.drop()
process.exit(0)
