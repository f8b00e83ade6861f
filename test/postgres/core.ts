/**
 * The core on PostgreSQL through the Promise facade, for tests and benchmarks: one client
 * per call, each with a pool of its own (what a separate process would have).
 */
import { Layer, ManagedRuntime } from "effect"
import { PostgresStorageLive, type PostgresStorageOptions } from "../../adapters/postgres/layer.js"
import { DEFAULT_TENANT, makeFacade, type SchedulingClient, startCore } from "../../src/facade.js"
import { CoreLive } from "../../src/layers.js"
import { WebhookPolicy } from "../../src/webhooks/policy.js"

export const postgresScheduling = async (options: PostgresStorageOptions): Promise<SchedulingClient> => {
  const runtime = ManagedRuntime.make(
    CoreLive.pipe(
      Layer.provide(Layer.succeed(WebhookPolicy, { allowPrivate: false })),
      Layer.provide(PostgresStorageLive(options))
    )
  )
  return makeFacade(await startCore(runtime), DEFAULT_TENANT)
}
