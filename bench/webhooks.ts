/**
 * Webhook delivery benchmark: deliveries per second to a local receiver with
 * 1,000 events queued, and the latency from commit to receipt (p50, p99), next to the plain
 * HTTP round trip of the same transport in the same run. The receiver runs in a worker
 * thread (its own event loop, the machine's other core) and answers 200 at once; times are
 * absolute (`performance.timeOrigin + performance.now()`), comparable across threads.
 *
 * Run: npx tsx bench/webhooks.ts [--events 1000] [--storage memory|sqlite|both]
 * Targets: ≥ 1,000 deliveries/s, p50 commit→receipt < 50 ms.
 */
import { Effect, Exit, Layer, ManagedRuntime, Scope } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { performance } from "node:perf_hooks"
import { Worker } from "node:worker_threads"
import { MemoryStorageLive } from "../adapters/memory/storage.js"
import { SqliteStorageLive } from "../adapters/sqlite/layer.js"
import { makeDispatcher } from "../adapters/webhooks/dispatcher.js"
import { WebhookPolicyLive } from "../adapters/webhooks/guard.js"
import { makeHttpTransport } from "../adapters/webhooks/transport.js"
import { Clients } from "../src/clients/Clients.js"
import { Events } from "../src/events/Events.js"
import { CoreLive } from "../src/layers.js"
import type { Storage } from "../src/ports/storage.js"
import { Tenant, type TenantId } from "../src/ports/tenant.js"
import { Webhooks } from "../src/webhooks/Webhooks.js"

const args = process.argv.slice(2)
const option = (name: string, fallback: string) => {
  const i = args.indexOf(`--${name}`)
  return i >= 0 && args[i + 1] !== undefined ? args[i + 1]! : fallback
}
const EVENTS = Number(option("events", "1000"))
const STORAGE = option("storage", "both")

const now = () => performance.timeOrigin + performance.now()
const tenant: TenantId = { account_id: `acc_${"7".repeat(26)}`, environment: "sandbox" }

// ---- the receiver, in a worker thread -----------------------------------------------------

const RECEIVER = `
const http = require("node:http")
const { parentPort } = require("node:worker_threads")
const { performance } = require("node:perf_hooks")
let pending = []
const flush = () => { if (pending.length > 0) { parentPort.postMessage(pending); pending = [] } }
setInterval(flush, 5)
const server = http.createServer((req, res) => {
  req.resume()
  req.on("end", () => {
    pending.push([req.headers["webhook-id"] || "", performance.timeOrigin + performance.now()])
    res.writeHead(200, { "content-length": "0" })
    res.end()
  })
})
server.keepAliveTimeout = 60000
server.listen(0, "127.0.0.1", () => parentPort.postMessage({ port: server.address().port }))
`

interface Receiver {
  readonly url: string
  readonly arrivals: Map<string, number>
  readonly count: () => number
  readonly waitFor: (n: number, timeoutMs?: number) => Promise<void>
  readonly close: () => Promise<number>
}

const startReceiver = (): Promise<Receiver> =>
  new Promise((resolve) => {
    const worker = new Worker(RECEIVER, { eval: true })
    const arrivals = new Map<string, number>()
    let total = 0
    const waiters: Array<{ n: number; resolve: () => void }> = []
    worker.on("message", (message: unknown) => {
      if (!Array.isArray(message)) {
        const port = (message as { port: number }).port
        resolve({
          url: `http://127.0.0.1:${port}/hooks`,
          arrivals,
          count: () => total,
          waitFor: (n, timeoutMs = 60_000) =>
            new Promise<void>((done, fail) => {
              if (total >= n) return done()
              const timer = setTimeout(() => fail(new Error(`receiver got ${total} of ${n}`)), timeoutMs)
              waiters.push({ n, resolve: () => (clearTimeout(timer), done()) })
            }),
          close: () => worker.terminate()
        })
        return
      }
      for (const [id, at] of message as Array<[string, number]>) {
        if (!id.startsWith("evt_")) continue // the plain round trips
        total++
        if (!arrivals.has(id)) arrivals.set(id, at)
      }
      for (let i = waiters.length - 1; i >= 0; i--) {
        if (total >= waiters[i]!.n) waiters.splice(i, 1)[0]!.resolve()
      }
    })
  })

// ---- helpers ------------------------------------------------------------------------------

const percentile = (values: ReadonlyArray<number>, p: number): number => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!
}
const ms = (n: number) => `${n.toFixed(2)} ms`
const rate = (count: number, elapsedMs: number) => `${Math.round((count / elapsedMs) * 1000).toLocaleString("en")}/s`

// ---- plain HTTP round trips ---------------------------------------------------------------

const plainHttp = async (receiver: Receiver) => {
  const transport = makeHttpTransport({ timeoutMs: 10_000, allowPrivate: true, maxSockets: 32 })
  const body = JSON.stringify({ id: "evt_plain", type: "bench", data: { object: { n: 1 } } })
  const headers = { "webhook-id": "plain", "webhook-timestamp": "0", "webhook-signature": "v1,x" }
  for (let i = 0; i < 200; i++) await transport.send({ url: receiver.url, headers, body }) // warm up
  const rtts: Array<number> = []
  for (let i = 0; i < 1000; i++) {
    const start = now()
    const result = await transport.send({ url: receiver.url, headers, body })
    if (result._tag !== "Response" || result.status !== 200) throw new Error("plain request failed")
    rtts.push(now() - start)
  }
  const n = 4000
  const start = now()
  let next = 0
  await Promise.all(Array.from({ length: 32 }, async () => {
    while (next++ < n) await transport.send({ url: receiver.url, headers, body })
  }))
  const elapsed = now() - start
  transport.close()
  return { p50: percentile(rtts, 50), p99: percentile(rtts, 99), rps: (n / elapsed) * 1000, elapsed, n }
}

// ---- deliveries ---------------------------------------------------------------------------

interface DeliveryFigures {
  readonly label: string
  readonly queued: { readonly count: number; readonly elapsed: number; readonly recorded: number }
  readonly steady: { readonly count: number; readonly p50: number; readonly p99: number; readonly max: number }
  readonly burst: { readonly count: number; readonly p50: number; readonly p99: number; readonly elapsed: number }
  readonly duplicates: number
}

const deliveries = async (label: string, storage: Layer.Layer<Storage, unknown>, receiver: Receiver): Promise<DeliveryFigures> => {
  const runtime = ManagedRuntime.make(
    CoreLive.pipe(Layer.provide(WebhookPolicyLive({ allowPrivate: true })), Layer.provide(storage))
  )
  const run = <A, E>(effect: Effect.Effect<A, E, Clients | Webhooks | Events | Tenant>) =>
    runtime.runPromise(Effect.provideService(effect, Tenant, tenant))
  const endpoint = await run(Effect.flatMap(Webhooks, (w) => w.create({ url: receiver.url, events: ["*"] })))
  // Commit time of every event: Events calls in-process listeners right after the commit.
  const committedAt = new Map<string, number>()
  const events = await runtime.runPromise(Events)
  const unsubscribe = events.subscribe((event) => committedAt.set(event.id, now()))
  const createClient = (i: number) => run(Effect.flatMap(Clients, (c) => c.create({ name: `Client ${i}` })))
  const receivedBefore = receiver.count()

  // 1. Throughput: EVENTS events committed while no dispatcher runs, then start one.
  for (let i = 0; i < EVENTS; i += 50) {
    await Promise.all(Array.from({ length: Math.min(50, EVENTS - i) }, (_, j) => createClient(i + j)))
  }
  const scope = await runtime.runPromise(Scope.make())
  const started = now()
  await runtime.runPromise(Scope.extend(makeDispatcher({ allowPrivate: true, pollIntervalMs: 200 }), scope))
  await receiver.waitFor(receivedBefore + EVENTS)
  const elapsed = now() - started
  // Until every outcome is written too (all deliveries `succeeded`).
  const succeeded = async () => {
    let n = 0
    let cursor: string | undefined
    for (;;) {
      const page = await run(
        Effect.flatMap(
          Webhooks,
          (w) => w.listDeliveries(endpoint.id, { status: "succeeded", limit: 100, ...(cursor !== undefined ? { cursor } : {}) })
        )
      )
      n += page.data.length
      if (!page.has_more) return n
      cursor = page.next_cursor!
    }
  }
  while ((await succeeded()) < EVENTS) await new Promise((resolve) => setTimeout(resolve, 5))
  const recorded = now() - started

  // 2. Latency with the dispatcher running: a steady stream, then a burst of EVENTS at once.
  const latencyOf = (ids: Iterable<string>) => Array.from(ids, (id) => receiver.arrivals.get(id)! - committedAt.get(id)!)
  const newIds = (since: Set<string>) => [...committedAt.keys()].filter((id) => !since.has(id))

  let seen = new Set(committedAt.keys())
  const steadyCount = 500
  let base = receiver.count()
  for (let i = 0; i < steadyCount; i++) {
    void createClient(i)
    await new Promise((resolve) => setTimeout(resolve, 2))
  }
  await receiver.waitFor(base + steadyCount)
  const steady = latencyOf(newIds(seen))

  seen = new Set(committedAt.keys())
  base = receiver.count()
  const burstStart = now()
  await Promise.all(Array.from({ length: EVENTS }, (_, i) => createClient(i)))
  await receiver.waitFor(base + EVENTS)
  const burstElapsed = now() - burstStart
  const burst = latencyOf(newIds(seen))

  unsubscribe()
  await runtime.runPromise(Scope.close(scope, Exit.void))
  await runtime.dispose()
  const total = EVENTS + steadyCount + EVENTS
  return {
    label,
    queued: { count: EVENTS, elapsed, recorded },
    steady: { count: steady.length, p50: percentile(steady, 50), p99: percentile(steady, 99), max: Math.max(...steady) },
    burst: { count: burst.length, p50: percentile(burst, 50), p99: percentile(burst, 99), elapsed: burstElapsed },
    duplicates: receiver.count() - receivedBefore - total
  }
}

// ---- main ---------------------------------------------------------------------------------

const main = async () => {
  console.log(`webhook delivery benchmark — ${os.cpus().length} CPUs, Node ${process.version}, ${EVENTS} events`)
  const receiver = await startReceiver()
  const plain = await plainHttp(receiver)
  console.log("")
  console.log("plain HTTP POST to the receiver (same transport, keep-alive)")
  console.log(`  round trip, one at a time:  p50 ${ms(plain.p50)}   p99 ${ms(plain.p99)}`)
  console.log(`  32 concurrent:              ${rate(plain.n, plain.elapsed)}`)

  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "slotwise-bench-webhooks-"))
  const runs: Array<[string, Layer.Layer<Storage, unknown>]> = []
  if (STORAGE === "memory" || STORAGE === "both") runs.push(["memory", MemoryStorageLive])
  if (STORAGE === "sqlite" || STORAGE === "both") {
    runs.push(["SQLite file", SqliteStorageLive({ filename: path.join(dir, "bench.db") })])
  }
  try {
    for (const [label, layer] of runs) {
      const f = await deliveries(label, layer, receiver)
      console.log("")
      console.log(`deliveries, ${f.label} storage (signed, dispatcher defaults: 128 in flight, 32 per endpoint)`)
      console.log(`  ${f.queued.count} queued → all received:   ${ms(f.queued.elapsed)}  = ${rate(f.queued.count, f.queued.elapsed)}`)
      console.log(`  … and all recorded succeeded: ${ms(f.queued.recorded)}  = ${rate(f.queued.count, f.queued.recorded)}`)
      console.log(
        `  commit → receipt, steady ~500/s (${f.steady.count}): p50 ${ms(f.steady.p50)}   p99 ${ms(f.steady.p99)}   max ${ms(f.steady.max)}`
      )
      console.log(
        `  commit → receipt, burst of ${f.burst.count}:   p50 ${ms(f.burst.p50)}   p99 ${ms(f.burst.p99)}   (all in ${ms(f.burst.elapsed)})`
      )
      console.log(`  duplicate deliveries: ${f.duplicates}`)
    }
  } finally {
    await receiver.close()
    fs.rmSync(dir, { recursive: true, force: true })
  }
}

main().then(
  () => process.exit(0),
  (error) => {
    console.error(error)
    process.exit(1)
  }
)
