/**
 * The core on PostgreSQL through the Promise facade, for tests and benchmarks: one client
 * per call, each with a pool of its own (what a separate process would have).
 */
import { Clock, Effect, Layer, ManagedRuntime } from "effect"
import { PostgresStorageLive, type PostgresStorageOptions } from "../../adapters/postgres/layer.js"
import { DEFAULT_TENANT, makeFacade, type SchedulingClient, startCore } from "../../library.js"
import { CoreLive } from "../../src/layers.js"
import { WebhookPolicy } from "../../src/webhooks/policy.js"

/**
 * The live clock moved to start at `startMs` (it runs on from there at the live pace, and
 * sleeps are the live ones): for a test whose outcome depends on the day, not on the moment.
 */
export const clockFrom = (startMs: number): Clock.Clock => {
  const live = Clock.make()
  const offset = startMs - live.unsafeCurrentTimeMillis()
  const millis = () => live.unsafeCurrentTimeMillis() + offset
  const nanos = () => live.unsafeCurrentTimeNanos() + BigInt(offset) * 1_000_000n
  return {
    [Clock.ClockTypeId]: Clock.ClockTypeId,
    unsafeCurrentTimeMillis: millis,
    currentTimeMillis: Effect.sync(millis),
    unsafeCurrentTimeNanos: nanos,
    currentTimeNanos: Effect.sync(nanos),
    sleep: (duration) => live.sleep(duration)
  }
}

/** `clock`: the core's clock (default: the live one). */
export const postgresScheduling = async (options: PostgresStorageOptions, clock?: Clock.Clock): Promise<SchedulingClient> => {
  const core = CoreLive.pipe(
    Layer.provide(Layer.succeed(WebhookPolicy, { allowPrivate: false })),
    Layer.provide(PostgresStorageLive(options))
  )
  const runtime = ManagedRuntime.make(clock === undefined ? core : Layer.merge(core, Layer.setClock(clock)))
  return makeFacade(await startCore(runtime), DEFAULT_TENANT)
}
