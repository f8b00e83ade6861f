/**
 * The reminder worker: a background fiber that fires due reminders (`makeReminderFiring`,
 * src/reminders/Reminders.ts) in every process; which process fires a given one is decided by the
 * database, never twice.
 *
 * It wakes on commits in this process that armed a job (it may be due sooner than the
 * worker's next look; other commits cannot bring one forward), on other processes' such
 * commits when storage signals them (PostgreSQL LISTEN/NOTIFY), and
 * otherwise sleeps until the next due time, at most `maxSleepMs`. Time is Effect's `Clock`,
 * so a test clock drives it. A round that fails is logged and retried within a minute.
 */
import { Clock, Duration, Effect, Layer, Option, Queue } from "effect"
import type { Events } from "../../src/events/Events.js"
import { Storage } from "../../src/ports/storage.js"
import { makeReminderFiring, onReminderArmed } from "../../src/reminders/Reminders.js"

export interface ReminderWorkerOptions {
  /** The longest sleep between looks at the due jobs (default 60 000 ms). */
  readonly maxSleepMs?: number
}

/** Starts the worker in the current scope; it stops when the scope closes. */
export const makeReminderWorker = (options: ReminderWorkerOptions = {}) =>
  Effect.gen(function*() {
    const firing = yield* makeReminderFiring
    const storage = yield* Storage
    const maxSleepMs = Math.max(1, options.maxSleepMs ?? 60_000)
    // A failed round (the database away) is retried within a minute even where nothing else wakes the worker.
    const retryMs = Math.min(maxSleepMs, 60_000)

    const wake = yield* Queue.sliding<void>(1)
    const poke = () => {
      Queue.unsafeOffer(wake, undefined)
    }
    const offArmed = onReminderArmed(storage, poke)
    const offSignals = Option.match(Option.fromNullable(storage.signals), {
      onNone: () => () => {},
      onSome: (signals) => signals.subscribe("reminders", poke)
    })
    yield* Effect.addFinalizer(() =>
      Effect.sync(() => {
        offArmed()
        offSignals()
      })
    )

    const round = Effect.gen(function*() {
      const next = yield* firing.fireDue
      if (next === null) return maxSleepMs
      const now = yield* Clock.currentTimeMillis
      return Math.max(1, Math.min(maxSleepMs, next - now))
    }).pipe(
      Effect.catchAllCause((cause) => Effect.as(Effect.logError("slotwise reminders: firing round failed", cause), retryMs))
    )

    const loop = Effect.forever(Effect.gen(function*() {
      const waitMs = yield* round
      // A wake-up that came during the round is still queued: it ends the wait at once.
      yield* Effect.race(Queue.take(wake), Effect.sleep(Duration.millis(waitMs)))
      // Many commits in a row (an import) fire one round, not one each.
      yield* Queue.takeAll(wake)
    }))

    yield* Effect.forkScoped(loop)
  })

/** The worker as a layer: runs while the layer lives. */
export const ReminderWorkerLive = (options: ReminderWorkerOptions = {}): Layer.Layer<never, never, Events | Storage> =>
  Layer.scopedDiscard(makeReminderWorker(options))
