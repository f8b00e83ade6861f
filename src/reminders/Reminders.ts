/**
 * Booking reminders: arming due jobs in a booking's own transaction, and firing the due ones
 * as `booking.reminder` events.
 *
 * Arming. Every change of a booking re-arms it: its jobs are removed, and a `confirmed`
 * booking gets one job per offset in force (the service's list, else the account's) at
 * `start − offset`, unless that time has already passed. So a reschedule moves them, a
 * cancellation (or completion, no-show) drops them. A change of the settings applies to
 * bookings armed after it.
 *
 * Firing. `fireDue` handles each tenant's due jobs in one transaction of that tenant: the
 * jobs are read (on PostgreSQL `FOR UPDATE SKIP LOCKED`, after the tenant's lock, which every
 * booking change takes first too), the event is appended and the job deleted together, so
 * a reminder is emitted once per booking, offset and start, whichever process fires it and
 * whenever one crashes. A job fired after its time (no process ran) is `late` beyond the
 * grace, and dropped once the booking has started.
 *
 * Settings. The account's list is stored on the account (the record) and copied into each
 * environment's own `reminder_settings`, which bookings read: reading the account would
 * take the system tenant's lock inside every booking's transaction. An embedded instance,
 * which has no accounts, uses `ReminderDefaults`.
 */
import { Clock, Context, Effect, Option } from "effect"
import type { Booking } from "../bookings/booking.js"
import { toMillis } from "../domain/common.js"
import type { StorageFailure } from "../domain/errors.js"
import { dueReminderId, type DueReminder, effectiveOffsets, REMINDER_GRACE_MS, type Reminders as ReminderList } from "./reminder.js"
import type { Service } from "../services/service.js"
import { Events } from "../events/Events.js"
import { BookingsCollection } from "../bookings/collections.js"
import { ServicesCollection } from "../services/collections.js"
import { type CollectionSpec, Read, Storage, type StorageService } from "../ports/storage.js"
import { Tenant, type TenantId } from "../ports/tenant.js"
import { thenDo } from "../internal/steps.js"

const MINUTE = 60_000

export const ReminderJobsCollection: CollectionSpec<DueReminder> = {
  name: "reminder_jobs",
  indexes: {
    booking_id: { type: "text", get: (j) => j.booking_id },
    due_ms: { type: "integer", get: (j) => j.due_ms },
    tenant_key: { type: "text", get: (j) => j.tenant_key }
  },
  order: ["due_ms"],
  storageIndexes: [["booking_id"], ["due_ms"]],
  // The worker's scans: the next due jobs of every tenant, then of the tenant it fires.
  acrossTenantIndexes: [["due_ms"], ["tenant_key", "due_ms"]]
}

/** An environment's copy of its account's reminder offsets. */
export interface ReminderSettings {
  readonly id: typeof ACCOUNT_SETTINGS_ID
  readonly reminders: ReminderList
}

const ACCOUNT_SETTINGS_ID = "account"

export const ReminderSettingsCollection: CollectionSpec<ReminderSettings> = {
  name: "reminder_settings",
  indexes: {},
  order: []
}

/** The account-level offsets of a tenant with no stored settings (an embedded instance). */
export class ReminderDefaults extends Context.Reference<ReminderDefaults>()("slotwise/ReminderDefaults", {
  defaultValue: (): ReminderList => []
}) {}

export const tenantKeyOf = (tenant: TenantId) => `${tenant.account_id}/${tenant.environment}`

const ENVIRONMENTS = ["sandbox", "production"] as const

/** Writing the account's list into both environments (inside the account's transaction). */
export const copyAccountReminders = (storage: StorageService, accountId: string, reminders: ReminderList) => {
  const settings = storage.collection(ReminderSettingsCollection)
  return Effect.forEach(ENVIRONMENTS, (environment) =>
    Effect.provideService(
      Effect.flatMap(settings.get(ACCOUNT_SETTINGS_ID), (found) =>
        Option.isSome(found)
          ? settings.update({ id: ACCOUNT_SETTINGS_ID, reminders })
          : settings.insert({ id: ACCOUNT_SETTINGS_ID, reminders })),
      Tenant,
      { account_id: accountId, environment }
    ), { discard: true })
}

/** Per storage, who hears that a change in this process armed a job (the worker, which may sleep past its due time). */
const armedListeners = new WeakMap<StorageService, Set<() => void>>()

/**
 * Calls `listener` after each commit in this process that armed a reminder job on `storage`;
 * returns the unsubscribe. Commits that arm nothing (no reminders in force, a cancellation)
 * wake nobody, so a worker does not look at the due jobs after every booking. Other
 * processes hear of armed jobs through the storage's `reminders` signal.
 */
export const onReminderArmed = (storage: StorageService, listener: () => void): () => void => {
  let listeners = armedListeners.get(storage)
  if (listeners === undefined) armedListeners.set(storage, listeners = new Set())
  listeners.add(listener)
  return () => {
    listeners.delete(listener)
  }
}

/** What arming knows already: a booking just inserted (`fresh`), its service, the account's settings as read. */
interface ArmOptions {
  readonly fresh?: boolean
  readonly service?: Service
  readonly settings?: ReadonlyArray<ReminderSettings>
}

/** Arming and disarming a booking's jobs, for the booking's own transaction. */
export const makeReminderArming = (storage: StorageService) =>
  Effect.map(ReminderDefaults, (defaults) => {
    const jobs = storage.collection(ReminderJobsCollection)
    const settings = storage.collection(ReminderSettingsCollection)
    const services = storage.collection(ServicesCollection)

    // This process's workers at once; other processes' through storage signals, where there are any.
    const announceArmed = Effect.zipRight(
      storage.afterCommit(Effect.sync(() => {
        for (const listener of armedListeners.get(storage) ?? []) {
          try {
            listener()
          } catch {
            // A listener's bug must not fail a committed change.
          }
        }
      })),
      storage.signals?.publish("reminders") ?? Effect.void
    )

    /** Arms a confirmed booking's jobs: one per offset in force whose moment is still ahead. */
    const armConfirmed = (booking: Booking, service: Service, account: ReminderList) => {
      const offsets = effectiveOffsets(service, account)
      if (offsets.length === 0) return Effect.void
      return Effect.flatMap(Effect.zip(Clock.currentTimeMillis, Tenant), ([now, tenant]) => {
        const tenant_key = tenantKeyOf(tenant)
        const start_ms = toMillis(booking.start)
        const due: Array<DueReminder> = []
        for (const offset_minutes of offsets) {
          const due_ms = start_ms - offset_minutes * MINUTE
          // Inside the offset already: this reminder's moment has passed.
          if (due_ms <= now) continue
          due.push({ id: dueReminderId(booking.id, offset_minutes), booking_id: booking.id, offset_minutes, start_ms, due_ms, tenant_key })
        }
        return due.length === 0
          ? Effect.void
          : Effect.zipRight(Effect.forEach(due, (job) => jobs.insert(job), { discard: true }), announceArmed)
      })
    }

    const NO_OFFSETS: ReminderList = []

    /**
     * The read of the account's settings that arming a new booking of `service` with `status`
     * makes (none when it makes none), for the caller to read with its own; its answer goes to
     * `armThen` as `settings`.
     */
    const settingsReadFor = (service: Service, status: Booking["status"]) =>
      status === "confirmed" && service.reminders == null
        ? [Read.list(ReminderSettingsCollection, { where: [{ column: "id", op: "eq", value: ACCOUNT_SETTINGS_ID }] })] as const
        : [] as const

    /**
     * Replaces `booking`'s jobs with those its state calls for. `fresh`: a booking just
     * inserted has none to remove; `service`: the booking's service when already read;
     * `settings`: what `settingsReadFor` read, when it was.
     */
    const arm = (
      booking: Booking,
      options: ArmOptions = {}
    ): Effect.Effect<void, StorageFailure, Tenant> => armThen(booking, options, Effect.void)

    /** `arm`, then `next` in the same step. Chained, not a generator: every create runs it. */
    const armThen = <A, E, R>(
      booking: Booking,
      options: ArmOptions,
      next: Effect.Effect<A, E, R>
    ): Effect.Effect<A, E | StorageFailure, R | Tenant> => {
      const disarm = options.fresh === true ? Effect.void : Effect.flatMap(
        jobs.listIndexes({ where: [{ column: "booking_id", op: "eq", value: booking.id }], columns: [] }),
        (armed) => Effect.forEach(armed, (job) => jobs.remove(job.id), { discard: true })
      )
      if (booking.status !== "confirmed") return thenDo(disarm, next)
      // Each read followed in its own step: every confirmed create runs this.
      const armFor = (service: Service | undefined) =>
        service === undefined
          ? next
          : service.reminders != null
          ? thenDo(armConfirmed(booking, service, NO_OFFSETS), next)
          : options.settings !== undefined
          ? thenDo(armConfirmed(booking, service, options.settings[0]?.reminders ?? defaults), next)
          : Effect.flatMap(
            settings.get(ACCOUNT_SETTINGS_ID),
            (found) => thenDo(armConfirmed(booking, service, Option.isSome(found) ? found.value.reminders : defaults), next)
          )
      return thenDo(
        disarm,
        options.service !== undefined
          ? armFor(options.service)
          : Effect.flatMap(services.get(booking.service_id), (found) => armFor(Option.getOrUndefined(found)))
      )
    }

    return { arm, armThen, settingsReadFor } as const
  })

/** Emitting due reminders, for a worker that runs in every process. */
export const makeReminderFiring = Effect.gen(function*() {
  const storage = yield* Storage
  const events = yield* Events
  const jobs = storage.collection(ReminderJobsCollection)
  const bookings = storage.collection(BookingsCollection)
  const BATCH = 100

  /** One tenant's due jobs, fired or dropped in one transaction; how many were handled. */
  const fireTenant = (tenant: TenantId, now: number) =>
    Effect.provideService(
      storage.transaction(Effect.gen(function*() {
        const due = yield* jobs.listAcrossTenants({
          where: [{ column: "tenant_key", op: "eq", value: tenantKeyOf(tenant) }, { column: "due_ms", op: "lte", value: now }],
          limit: BATCH,
          lock: "skip-locked"
        })
        for (const { doc: job } of due) {
          const booking = Option.getOrUndefined(yield* bookings.get(job.booking_id))
          const start = booking === undefined ? undefined : toMillis(booking.start)
          // A booking moved or cancelled since arming re-armed or disarmed it; this guards
          // against any job that outlived its booking's state.
          if (booking !== undefined && booking.status === "confirmed" && start === job.start_ms && start > now) {
            yield* events.record("booking.reminder", booking, {
              offset_minutes: job.offset_minutes,
              late: now - job.due_ms > REMINDER_GRACE_MS
            })
          }
          yield* jobs.remove(job.id)
        }
        return due.length
      })),
      Tenant,
      tenant
    )

  /**
   * Fires every job due now; answers the earliest later due time (null when none). Reads
   * without a transaction first: an idle worker takes no lock.
   */
  const fireDue = Effect.gen(function*() {
    const now = yield* Clock.currentTimeMillis
    for (;;) {
      const due = yield* jobs.listAcrossTenants({ where: [{ column: "due_ms", op: "lte", value: now }], limit: BATCH })
      if (due.length === 0) break
      const tenants = new Map<string, TenantId>()
      for (const { tenant } of due) tenants.set(tenantKeyOf(tenant), tenant)
      let handled = 0
      for (const tenant of tenants.values()) handled += yield* fireTenant(tenant, now)
      // Another process holds the rest (skip-locked): it fires them.
      if (handled === 0) break
    }
    const later = yield* jobs.listAcrossTenants({ where: [{ column: "due_ms", op: "gt", value: now }], limit: 1 })
    return later[0]?.doc.due_ms ?? null
  })

  return { fireDue } as const
})
