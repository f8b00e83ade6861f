/**
 * A clock that stands still until told to move: the in-memory sandbox's time. Sleeping
 * fibers (retry schedules, expiries) wake in time order as the clock passes their deadline,
 * so a test can book, advance an hour and observe what happened without waiting.
 */
import { Clock, Context, Deferred, Duration, Effect, FiberId, Layer } from "effect"

interface Sleeper {
  readonly wakeAt: number
  readonly deferred: Deferred.Deferred<void>
}

export interface ControlledClockService extends Clock.Clock {
  /** Moves time forward by `duration`, waking every sleeper due on the way, in order. */
  readonly advance: (duration: Duration.DurationInput) => Effect.Effect<void>
  /** Moves time to `ms` (never backwards), waking every sleeper due by then. */
  readonly setTime: (ms: number) => Effect.Effect<void>
}

export class ControlledClock extends Context.Tag("slotwise/ControlledClock")<ControlledClock, ControlledClockService>() {}

/** Lets fibers woken by a move run before the move returns. */
const settle = Effect.repeatN(Effect.yieldNow(), 20)

export const makeControlledClock = (startMs: number): ControlledClockService => {
  let now = startMs
  let sleepers: Array<Sleeper> = []

  const moveTo = (target: number): Effect.Effect<void> =>
    Effect.gen(function*() {
      for (;;) {
        const next = sleepers.reduce<Sleeper | undefined>(
          (earliest, s) => (s.wakeAt <= target && (earliest === undefined || s.wakeAt < earliest.wakeAt) ? s : earliest),
          undefined
        )
        if (next === undefined) break
        sleepers = sleepers.filter((s) => s !== next)
        now = Math.max(now, next.wakeAt)
        yield* Deferred.succeed(next.deferred, undefined)
        yield* settle
      }
      now = Math.max(now, target)
      yield* settle
    })

  return {
    [Clock.ClockTypeId]: Clock.ClockTypeId,
    unsafeCurrentTimeMillis: () => now,
    currentTimeMillis: Effect.sync(() => now),
    unsafeCurrentTimeNanos: () => BigInt(now) * 1_000_000n,
    currentTimeNanos: Effect.sync(() => BigInt(now) * 1_000_000n),
    sleep: (duration) =>
      Effect.suspend(() => {
        const millis = Duration.toMillis(duration)
        if (millis <= 0) return Effect.yieldNow()
        const deferred = Deferred.unsafeMake<void>(FiberId.none)
        const sleeper = { wakeAt: now + millis, deferred }
        sleepers.push(sleeper)
        return Effect.onInterrupt(Deferred.await(deferred), () =>
          Effect.sync(() => {
            sleepers = sleepers.filter((s) => s !== sleeper)
          }))
      }),
    advance: (duration) => Effect.suspend(() => moveTo(now + Duration.toMillis(Duration.decode(duration)))),
    setTime: (ms) => Effect.suspend(() => moveTo(ms))
  }
}

/** Installs a controlled clock as the default `Clock` and provides its controls. */
export const ControlledClockLive = (startMs: number): Layer.Layer<ControlledClock> => {
  const clock = makeControlledClock(startMs)
  return Layer.merge(Layer.setClock(clock), Layer.succeed(ControlledClock, clock))
}
