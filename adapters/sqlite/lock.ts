/**
 * The writer connection's lock: one holder at a time. Effect's `Semaphore.withPermits`
 * costs ~14 µs here, more than the statements of a small transaction, so this one does the
 * uncontended case in one step.
 *
 * Two rules keep it from ever being left held by a fiber that is gone:
 * - it is taken only in uninterruptible code (`acquire(restore)`): only the wait for a
 *   release is interruptible, and a fiber interrupted while waiting holds nothing;
 * - a release wakes every waiter to try again instead of handing the lock over, so a waiter
 *   interrupted while being woken simply does not take it.
 */
import { Effect } from "effect"

type Restore = <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>

export interface Lock {
  /**
   * Takes the lock, waiting while another fiber holds it. Run it in an uninterruptible
   * region and pass that region's `restore`: the wait is interruptible, the taking is not.
   */
  readonly acquire: (restore: Restore) => Effect.Effect<void>
  /** Takes the lock now if it is free (for plain code outside a fiber); true when taken. */
  readonly tryAcquire: () => boolean
  /** Frees the lock; only its holder calls this, once. */
  readonly release: () => void
  /** Runs `effect` holding the lock; releases it however `effect` ends. */
  readonly withLock: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
  /** Whether some fiber holds the lock now (for tests). */
  readonly isHeld: () => boolean
}

export const makeLock = (): Lock => {
  let held = false
  const waiters = new Set<() => void>()

  const released = Effect.async<void>((resume) => {
    const wake = () => resume(Effect.void)
    waiters.add(wake)
    return Effect.sync(() => {
      waiters.delete(wake)
    })
  })

  const acquire = (restore: Restore): Effect.Effect<void> =>
    Effect.suspend(() => {
      if (!held) {
        held = true
        return Effect.void
      }
      return Effect.zipRight(restore(released), acquire(restore))
    })

  const release = () => {
    held = false
    if (waiters.size === 0) return
    const woken = [...waiters]
    waiters.clear()
    for (const wake of woken) wake()
  }

  const withLock = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
    Effect.uninterruptibleMask((restore) => Effect.zipRight(acquire(restore), Effect.ensuring(restore(effect), Effect.sync(release))))

  const tryAcquire = () => {
    if (held) return false
    held = true
    return true
  }

  return { acquire, tryAcquire, release, withLock, isHeld: () => held }
}
