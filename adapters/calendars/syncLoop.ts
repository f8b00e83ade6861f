/**
 * The calendar sync loop: a background fiber that asks the core to claim the feeds that are
 * due (`Calendars.syncDue`), across tenants, into this instance's queue of syncs, and looks
 * again every `pollMs`. It does not wait for the syncs: a slow feed holds no other's turn.
 * Every instance on a database runs one; the core's leases make each feed one instance's at a
 * time, and all of them read the stored result. A new calendar is due at once, so it is read
 * within one poll of being added.
 */
import { Cause, Effect, Layer } from "effect"
import { Calendars } from "../../src/calendars/Calendars.js"

export interface CalendarSyncLoopOptions {
  /** How often to look for feeds that are due (default 2000 ms). */
  readonly pollMs?: number | undefined
  /** Feeds claimed at most per pass (default 10; fewer when this instance's queue is full). */
  readonly batch?: number | undefined
}

export const DEFAULT_CALENDAR_POLL_MS = 2000

/**
 * Waits in real time, not on Effect's `Clock`: due times follow the Clock (a controlled
 * clock in tests decides what is due), but a poll per clock step would make advancing a
 * test clock by a day run the loop tens of thousands of times.
 */
const realSleep = (ms: number) =>
  Effect.async<void>((resume) => {
    const timer = setTimeout(() => resume(Effect.void), ms)
    return Effect.sync(() => clearTimeout(timer))
  })

export const CalendarSyncLoopLive = (options: CalendarSyncLoopOptions = {}) =>
  Layer.scopedDiscard(Effect.gen(function*() {
    const calendars = yield* Calendars
    const pollMs = options.pollMs ?? DEFAULT_CALENDAR_POLL_MS
    const batch = options.batch ?? 10
    const pass = calendars.syncDue({ max: batch }).pipe(
      Effect.catchAllCause((cause) => Effect.as(Effect.logWarning("calendar sync pass failed", Cause.pretty(cause)), 0))
    )
    // A full batch means more may be due: go again at once (a full queue claims none); otherwise wait for the next poll.
    const loop = Effect.forever(Effect.flatMap(pass, (synced) => synced >= batch ? Effect.void : realSleep(pollMs)))
    yield* Effect.forkScoped(loop)
  }))
