/**
 * One instance's queue of calendar syncs: jobs wait in a `FairQueue` by account and run in
 * fibers of the given scope, at most `concurrency` at once and one per account, so one
 * account's many or slow feeds never hold back another's. A job can be abandoned (its
 * calendar deleted): taken out of the queue, or its fiber interrupted.
 */
import { Effect, Fiber, type Scope } from "effect"
import { FairQueue } from "./fairQueue.js"

export interface SyncJob {
  /** Whose it is: jobs of one key run one at a time, keys in turn. */
  readonly key: string
  /** What it is about (a calendar's id): what `abandon` names. */
  readonly id: string
}

export const makeSyncQueue = <J extends SyncJob>(
  scope: Scope.Scope,
  concurrency: number,
  run: (job: J) => Effect.Effect<void, unknown>
) => {
  const waiting = new FairQueue<J>()
  /** The jobs running, by id, with their key and fiber. */
  const running = new Map<string, { readonly key: string; fiber: Fiber.RuntimeFiber<unknown> | undefined }>()

  const runOne = (job: J) =>
    run(job).pipe(
      Effect.catchAllCause((cause) => Effect.logWarning("calendar sync failed", cause)),
      Effect.ensuring(Effect.suspend(() => {
        running.delete(job.id)
        return pump
      }))
    )

  /** Starts waiting jobs while there is room: keys in turn, one job per key. */
  const pump: Effect.Effect<void> = Effect.suspend(() => {
    const started: Array<Effect.Effect<void>> = []
    while (running.size < concurrency) {
      const next = waiting.take((key) => [...running.values()].some((r) => r.key === key))
      if (next === undefined) break
      const entry: { key: string; fiber: Fiber.RuntimeFiber<unknown> | undefined } = { key: next.key, fiber: undefined }
      running.set(next.item.id, entry)
      // Interruptible whatever the caller (a request handler runs uninterruptibly): `abandon` interrupts it.
      started.push(Effect.map(Effect.forkIn(Effect.interruptible(runOne(next.item)), scope), (fiber) => void (entry.fiber = fiber)))
    }
    return Effect.all(started, { discard: true })
  })

  return {
    enqueue: (jobs: ReadonlyArray<J>) =>
      Effect.suspend(() => {
        for (const job of jobs) waiting.push(job.key, job)
        return pump
      }),
    /** Jobs that may still join: as many again as may run, less those waiting or running. */
    room: () => Math.max(0, 2 * concurrency - running.size - waiting.size),
    /** Stops the job about `id`, waiting or running. */
    abandon: (id: string) =>
      Effect.suspend(() => {
        waiting.removeWhere((job) => job.id === id)
        const fiber = running.get(id)?.fiber
        return fiber === undefined ? Effect.void : Fiber.interrupt(fiber)
      })
  }
}
