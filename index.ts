/**
 * The `slotwise` package: the core (src/) and its adapters, wired in compose.ts (the one
 * composition root, shared with the server and the mounted handlers).
 */
import { Duration, Effect, Either, Layer, ManagedRuntime, Schema, TestClock } from "effect"
import { calendarSyncLayer, coreLayer, type StorageChoice, storageLayer, workersLayer } from "./compose.js"
import { checkSchedulingOptions, type SchedulingOptions } from "./schedulingOptions.js"
import { formatInstant, parseInstant } from "./src/domain/common.js"
import { Reminders } from "./src/reminders/reminder.js"
import { ReminderDefaults } from "./src/reminders/Reminders.js"
import { DEFAULT_TENANT, makeFacade, type SchedulingClient, startCore } from "./library.js"
import { TestClockAt } from "./src/testing/testClock.js"

// The Effect surface's namespaces (`slotwise/core`), and the Promise facade's names flat.
export * from "./src/index.js"
export {
  AuthenticationError,
  ConflictError,
  DEFAULT_TENANT,
  InternalError,
  InvalidTransitionError,
  NotFoundError,
  OutsideAvailabilityError,
  PermissionError,
  RateLimitError,
  ResourceInUseError,
  type SchedulingClient,
  SeriesUnavailableError,
  SlotUnavailableError,
  SlotwiseError,
  ValidationError
} from "./library.js"
export {
  createHttpHandler,
  type HttpHandlerOptions,
  MemoryStorageLive,
  PostgresStorageLive,
  RedisRateLimitStoreLive,
  type SlotwiseHttpHandler,
  SqliteStorageLive,
  type StorageChoice
} from "./compose.js"
export { type SchedulingOptions } from "./schedulingOptions.js"
export * from "./adapters/webhooks/index.js"
export { makeReminderWorker, ReminderWorkerLive, type ReminderWorkerOptions } from "./adapters/reminders/worker.js"

/** The core with its webhook policy, plus the dispatcher when asked for; still needs `Storage`. */
const coreWithWebhooks = (
  webhooks: SchedulingOptions["webhooks"],
  context: {
    readonly storage: StorageChoice
    readonly resolveHosts: boolean
    readonly dnsServer?: string | undefined
    readonly publicUrl?: string | undefined
    readonly calendarSyncMinutes?: number | undefined
    readonly allowPrivate?: boolean | undefined
    readonly reminders?: SchedulingOptions["reminders"] | undefined
  }
) => {
  const dispatch = webhooks === undefined || webhooks === false ? false : webhooks === true ? {} : webhooks
  const core = coreLayer(
    {
      allowPrivate: context.allowPrivate === true || (dispatch !== false && dispatch.allowPrivate === true),
      resolveHosts: context.resolveHosts,
      resolver: dispatch === false ? undefined : dispatch.resolver
    },
    { dnsServer: context.dnsServer, publicUrl: context.publicUrl },
    context.publicUrl,
    { calendarSyncMinutes: context.calendarSyncMinutes }
  ).pipe(
    Layer.provide(Layer.succeed(ReminderDefaults, Schema.decodeUnknownSync(Reminders)(context.reminders ?? [])))
  )
  return workersLayer(dispatch, context.storage).pipe(Layer.provideMerge(core))
}

/** An embedded Slotwise acting for one default account's sandbox (see `tenant(...)`). */
export const createScheduling = async (given: SchedulingOptions = {}): Promise<SchedulingClient> => {
  const checked = checkSchedulingOptions(given)
  if (Either.isLeft(checked)) throw checked.left
  const options = checked.right
  const storage = options.storage ?? "memory"
  const runtime = ManagedRuntime.make(
    calendarSyncLayer(options.calendarSync === false ? false : options.calendarSync === true ? {} : options.calendarSync).pipe(
      Layer.provideMerge(coreWithWebhooks(options.webhooks, {
        storage,
        resolveHosts: true,
        dnsServer: options.dnsServer,
        publicUrl: options.publicUrl,
        calendarSyncMinutes: options.calendarSyncMinutes,
        allowPrivate: options.allowPrivateAddresses,
        reminders: options.reminders
      })),
      Layer.provide(storageLayer(storage))
    )
  )
  return makeFacade(await startCore(runtime), DEFAULT_TENANT)
}

export interface ClockAdvance {
  readonly days?: number
  readonly hours?: number
  readonly minutes?: number
  readonly seconds?: number
  readonly milliseconds?: number
}

export interface TestClockControls {
  /** Moves time forward; timers due on the way fire in order. */
  readonly advance: (by: ClockAdvance) => Promise<void>
  /** Moves time to an instant (never backwards). */
  readonly set: (instant: string) => Promise<void>
  /** The current instant. */
  readonly now: () => string
}

export interface TestScheduling extends SchedulingClient {
  readonly clock: TestClockControls
}

/**
 * An in-memory sandbox whose clock starts at `now` (default: the real time) and moves
 * only when told, for tests that book, advance time and observe without sleeping.
 */
export const createTestScheduling = async (
  options: {
    readonly now?: string
    readonly webhooks?: SchedulingOptions["webhooks"]
    readonly publicUrl?: SchedulingOptions["publicUrl"]
    readonly reminders?: SchedulingOptions["reminders"]
  } = {}
): Promise<TestScheduling> => {
  const start = options.now === undefined ? Date.now() : parseInstant(options.now)
  if (start === undefined) throw new TypeError(`now must be an RFC 3339 instant, got ${options.now}`)
  // The dispatcher, when asked for, runs on the test clock: advancing it fires retries.
  const runtime = ManagedRuntime.make(
    // No DNS at create time in a test sandbox (names are still checked when delivering).
    coreWithWebhooks(options.webhooks, {
      storage: "memory",
      resolveHosts: false,
      publicUrl: options.publicUrl,
      reminders: options.reminders
    }).pipe(
      Layer.provide(storageLayer("memory")),
      Layer.provideMerge(TestClockAt(start))
    )
  )
  const client = makeFacade(await startCore(runtime), DEFAULT_TENANT)
  const clock = await runtime.runPromise(TestClock.TestClock)
  return {
    ...client,
    clock: {
      advance: (by) => {
        const ms = (by.days ?? 0) * 86_400_000 + (by.hours ?? 0) * 3_600_000 + (by.minutes ?? 0) * 60_000 +
          (by.seconds ?? 0) * 1000 + (by.milliseconds ?? 0)
        if (!Number.isFinite(ms) || ms < 0) return Promise.reject(new RangeError("advance takes a non-negative duration"))
        return runtime.runPromise(clock.adjust(Duration.millis(ms)))
      },
      set: (instant) => {
        const target = parseInstant(instant)
        if (target === undefined) return Promise.reject(new TypeError(`not an RFC 3339 instant: ${instant}`))
        return runtime.runPromise(Effect.flatMap(clock.currentTimeMillis, (now) => clock.setTime(Math.max(now, target))))
      },
      now: () => formatInstant(clock.unsafeCurrentTimeMillis())
    }
  }
}
