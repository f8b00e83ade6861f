/**
 * `StorageService.afterCommit` for adapters that keep the open transaction in a FiberRef:
 * effects queue on the transaction and run once it has committed, in the order queued;
 * outside a transaction they run at once.
 */
import { Effect, type FiberRef } from "effect"

/** What a transaction keeps for `afterCommit`. */
export interface AfterCommitQueue {
  readonly afterCommit: Array<Effect.Effect<void>>
}

/** Queues `effect` on the fiber's open transaction (read from `openTransaction`), else runs it. */
export const afterCommitOn =
  <T extends AfterCommitQueue>(openTransaction: FiberRef.FiberRef<T | undefined>) => (effect: Effect.Effect<void>): Effect.Effect<void> =>
    Effect.withFiberRuntime((fiber) => {
      const open = fiber.getFiberRef(openTransaction)
      if (open === undefined) return effect
      open.afterCommit.push(effect)
      return Effect.void
    })

/** Runs what a committed transaction queued (the common single effect without a loop). */
export const runAfterCommit = (transaction: AfterCommitQueue): Effect.Effect<void> =>
  transaction.afterCommit.length <= 1
    ? transaction.afterCommit[0] ?? Effect.void
    : Effect.forEach(transaction.afterCommit, (effect) => effect, { discard: true })
