/**
 * The dispatcher's rounds while nobody listens: a server without an active endpoint still
 * commits events, and each round would read the log's end, the cursor, the endpoints and
 * the queue to find nothing. After a round that found no endpoint and nothing due, the next
 * one starts no sooner than `idleRoundIntervalMs` after it. The gaps are lower bounds, so a
 * loaded machine (which only makes rounds later) cannot fail the test.
 */
import { Effect, Layer, ManagedRuntime } from "effect"
import { afterEach, describe, expect, it } from "vitest"
import { MemoryStorageLive } from "../../adapters/memory/storage.js"
import { WebhookDispatcherLive } from "../../adapters/webhooks/dispatcher.js"
import { WebhookPolicyLive } from "../../adapters/webhooks/guard.js"
import { Clients } from "../../src/clients/index.js"
import { CoreLive } from "../../src/layers.js"
import { Tenant, type TenantId } from "../../src/ports/index.js"
import { Webhooks } from "../../src/webhooks/index.js"
import { WebhookOutbox } from "../../src/webhooks/Outbox.js"
import { startReceiver, waitFor } from "./receiver.js"

const cleanup: Array<() => Promise<void>> = []
afterEach(async () => {
  for (const f of cleanup.splice(0).reverse()) await f()
})

const tenant: TenantId = { account_id: `acc_${"2".repeat(26)}`, environment: "sandbox" }

/** A dispatcher over the core, with each of its fan-outs recorded: when it started and whether anyone listened. */
const dispatching = (idleRoundIntervalMs: number) => {
  const rounds: Array<{ readonly at: number; readonly unheard: boolean }> = []
  const core = CoreLive.pipe(Layer.provide(WebhookPolicyLive({ allowPrivate: true })), Layer.provideMerge(MemoryStorageLive))
  const recorded = Layer.effect(
    WebhookOutbox,
    Effect.map(WebhookOutbox, (outbox) =>
      WebhookOutbox.make({
        ...outbox,
        fanOut: (options) => {
          const at = performance.now()
          return Effect.tap(outbox.fanOut(options), (fanned) => Effect.sync(() => rounds.push({ at, unheard: fanned.unheard })))
        }
      }))
  )
  const runtime = ManagedRuntime.make(
    WebhookDispatcherLive({ allowPrivate: true, idleRoundIntervalMs }).pipe(Layer.provide(recorded), Layer.provideMerge(core))
  )
  cleanup.push(() => runtime.dispose())
  const run = <A, E>(effect: Effect.Effect<A, E, Clients | Webhooks | Tenant>) =>
    runtime.runPromise(Effect.provideService(effect, Tenant, tenant))
  let n = 0
  const commit = () => run(Effect.flatMap(Clients, (clients) => clients.create({ name: `Client ${++n}` })))
  return { rounds, run, commit }
}

describe("dispatch rounds while no endpoint is active", () => {
  it("start at least idleRoundIntervalMs apart however many commits wake them, and an endpoint created then still hears what follows", async () => {
    const { commit, rounds, run } = dispatching(300)
    // Commits keep waking the loop (one every few ms) until three rounds have found nobody listening.
    await waitFor(
      async () => {
        await commit()
        return rounds.filter((r) => r.unheard).length >= 3
      },
      20_000,
      "three rounds that found no endpoint"
    )
    const gaps = rounds.slice(1).flatMap((round, i) => (rounds[i]!.unheard ? [round.at - rounds[i]!.at] : []))
    expect(gaps.length).toBeGreaterThanOrEqual(2)
    for (const gap of gaps) expect(gap).toBeGreaterThanOrEqual(290)

    // Once an endpoint is active, what is committed after it is delivered.
    const receiver = await startReceiver()
    cleanup.push(() => receiver.close())
    await run(Effect.flatMap(Webhooks, (webhooks) => webhooks.create({ url: receiver.url, events: ["client.created"] })))
    const heard = await commit()
    await waitFor(() => receiver.received.length >= 1, 20_000, "the delivery")
    expect(receiver.received.map((r) => JSON.parse(r.body).data.object.id)).toEqual([heard.id])
    expect(rounds.at(-1)!.unheard).toBe(false)
  })
})
