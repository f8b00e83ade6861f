/**
 * Fan-out on a shared database: a process woken by commits another process already fanned
 * out reads the stored cursor and stops there, without taking the write lock; events it has
 * not seen are fanned out as before.
 */
import { Effect, Layer, ManagedRuntime } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { SqliteStorageLive } from "../../compose.js"
import { DEFAULT_TENANT, makeFacade, startCore } from "../../library.js"
import { CoreLive } from "../../src/layers.js"
import { Storage } from "../../src/ports/storage.js"
import { WebhookOutbox } from "../../src/webhooks/Outbox.js"
import { WebhookPolicy } from "../../src/webhooks/policy.js"

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "slotwise-fanout-"))
const file = path.join(dir, "shared.db")
const runtimes: Array<ManagedRuntime.ManagedRuntime<any, any>> = []
afterAll(async () => {
  for (const runtime of runtimes) await runtime.dispose()
  fs.rmSync(dir, { recursive: true, force: true })
})

/** One process's core on the shared file, counting the write transactions it opens. */
const instance = () => {
  const counter = { transactions: 0 }
  const counted = Layer.effect(
    Storage,
    Effect.map(Storage, (storage) => ({
      ...storage,
      transaction: <A, E, R>(effect: Effect.Effect<A, E, R>) =>
        Effect.suspend(() => {
          counter.transactions++
          return storage.transaction(effect)
        })
    }))
  ).pipe(Layer.provide(SqliteStorageLive({ filename: file })))
  const runtime = ManagedRuntime.make(
    CoreLive.pipe(Layer.provide(Layer.succeed(WebhookPolicy, { allowPrivate: true })), Layer.provide(counted))
  )
  runtimes.push(runtime)
  const fanOut = () => runtime.runPromise(Effect.flatMap(WebhookOutbox, (outbox) => outbox.fanOut()))
  return { runtime, counter, fanOut }
}

describe("fan-out across processes", () => {
  it("skips the lock when another process has fanned the events out, not when there are new ones", async () => {
    const one = instance()
    const two = instance()
    const facade = makeFacade(await startCore(one.runtime), DEFAULT_TENANT)
    await facade.webhooks.create({ url: "http://127.0.0.1:9/hook", events: ["client.created"] })
    await facade.clients.create({ name: "Ana" })
    expect((await one.fanOut()).processed).toBeGreaterThan(0)

    const before = two.counter.transactions
    expect((await two.fanOut()).processed).toBe(0)
    expect(two.counter.transactions).toBe(before)

    await facade.clients.create({ name: "Bob" })
    const fresh = await two.fanOut()
    expect(fresh.processed).toBe(1)
    expect(two.counter.transactions).toBe(before + 1)
  })

  it("takes no lock while no endpoint listens, and an endpoint created later gets only the events after it", async () => {
    const quiet = instance()
    const facade = makeFacade(await startCore(quiet.runtime), { account_id: `acc_${"3".repeat(26)}`, environment: "sandbox" })
    // The file is shared with the test above: its endpoint would listen here too.
    for (const hook of (await facade.webhooks.list()).data) await facade.webhooks.delete(hook.id)
    const shared = makeFacade(await startCore(quiet.runtime), DEFAULT_TENANT)
    for (const hook of (await shared.webhooks.list()).data) await shared.webhooks.delete(hook.id)
    await quiet.fanOut()
    const before = quiet.counter.transactions
    await facade.clients.create({ name: "Cy" })
    const writes = quiet.counter.transactions - before
    expect((await quiet.fanOut()).processed).toBe(0)
    expect(quiet.counter.transactions - before).toBe(writes)

    const hook = await facade.webhooks.create({ url: "http://127.0.0.1:9/hook", events: ["client.created"] })
    await facade.clients.create({ name: "Di" })
    const fanned = await quiet.fanOut()
    // Read from the cursor left behind, Cy's event among them, but delivered only what came after the endpoint.
    expect(fanned.processed).toBeGreaterThan(1)
    const delivered = (await facade.webhooks.listDeliveries(hook.id)).data
    expect(delivered.map((d) => d.event_type)).toEqual(["client.created"])
  })
})
