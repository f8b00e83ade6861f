/**
 * External calendars (docs/api.md §12 "Busy time in"): a staff member subscribes to an
 * iCalendar feed; its opaque events, read through the `FeedReader` port, are stored as merged
 * busy ranges that the slot computation reads like time off.
 *
 * Syncing. Each calendar is due at `due_ms`. Whoever syncs it (the sync loop of any instance,
 * or `sync` on request) first takes a lease in storage, moving `due_ms` past the lease's end,
 * so one instance at a time reads a feed and a lease left by a crashed instance lapses. The
 * result is written only while the lease is still the syncer's: the busy ranges are replaced
 * in one transaction (only the ranges that changed are written), a `304` keeps them, and a
 * failure keeps them too and records why, trying again after a growing backoff.
 *
 * Fairness. Leased calendars wait in this instance's queue, served an account at a time in
 * turn, at most `SYNC_CONCURRENCY` at once and one per account, so one account's many or
 * slow feeds never hold back another's; the sync loop claims only what the queue has room
 * for, and does not wait for the syncs it starts. A sync asked for (`sync`, `POST …/sync`)
 * joins the same queue and is answered at once (`sync_state: "queued"`). Deleting a calendar
 * interrupts its sync here; an instance syncing a calendar deleted through another notices
 * within `SYNC_CHECK_MS` and gives the read up.
 */
import { Context, Duration, Effect, Option, Schedule, Schema } from "effect"
import {
  backoffMs,
  busyChunks,
  CalendarCreate,
  fetchableUrl,
  HORIZON_BEFORE_MS,
  MAX_CALENDARS_PER_STAFF,
  MAX_HORIZON_DAYS,
  redactedUrl,
  type StoredCalendar,
  toCalendar
} from "./calendar.js"
import { formatInstant } from "../domain/common.js"
import { NotFound, ValidationFailed } from "../domain/errors.js"
import { CalendarsCollection } from "./collections.js"
import { FairQueue } from "./fairQueue.js"
import { makeSyncQueue, type SyncJob } from "./syncQueue.js"
import { removeCalendar, replaceBusyRanges } from "./stored.js"
import { Events } from "../events/Events.js"
import { FeedFailed, FeedReader, type FeedResult } from "../ports/feedReader.js"
import { currentStamp, findOr404, listPage, newResource, PageParams } from "../internal/resources.js"
import { decodeInput } from "../domain/validation.js"
import { ServicesCollection } from "../services/collections.js"
import { StaffCollection } from "../staff/collections.js"
import { Storage } from "../ports/storage.js"
import { Tenant, type TenantId } from "../ports/tenant.js"
import { mergeIntervals } from "../scheduling/windows.js"

export { removeCalendarsOfStaff } from "./stored.js"
import { inTenant } from "../webhooks/claims.js"
import { checkOutboundUrl, WebhookPolicy } from "../webhooks/policy.js"
import { newLease } from "../webhooks/secret.js"

const MINUTE = 60_000
const DAY = 86_400_000

export const DEFAULT_SYNC_INTERVAL_MS = 10 * MINUTE
/**
 * Longer than a feed read can take: 10 s for the whole exchange (redirects included), up to
 * 30 s waiting for a parse worker and 30 s for the parse; renewed when a sync leaves the queue.
 */
export const DEFAULT_SYNC_LEASE_MS = 120_000
/** Syncs one instance runs at once (one per account); as many again may wait in its queue. */
export const SYNC_CONCURRENCY = 4
/** How often a running sync checks that its calendar still exists (deleted through another instance). */
export const SYNC_CHECK_MS = 1000

export interface CalendarSyncSettingsService {
  /** How often each feed is read (`--calendar-sync-minutes`). */
  readonly intervalMs: number
  /** How long a sync's lease holds the feed before another instance may take it. */
  readonly leaseMs: number
}

export class CalendarSyncSettings extends Context.Reference<CalendarSyncSettings>()("slotwise/CalendarSyncSettings", {
  defaultValue: (): CalendarSyncSettingsService => ({ intervalMs: DEFAULT_SYNC_INTERVAL_MS, leaseMs: DEFAULT_SYNC_LEASE_MS })
}) {}

export const CalendarListParams = Schema.Struct({ ...PageParams }).annotations({ identifier: "CalendarListParams" })
export type CalendarListParams = typeof CalendarListParams.Encoded

/** A calendar leased for one sync. */
interface Claim {
  readonly tenant: TenantId
  readonly calendar: StoredCalendar
}

/** Candidate rows read per calendar claimed, so that the claim can take tenants in turn. */
const CANDIDATES_PER_CLAIM = 4

/** The key of fairness: an account (both of its environments). */
const tenantKey = (tenant: TenantId) => tenant.account_id

const noReader = { read: () => Effect.fail(new FeedFailed({ message: "this instance does not read calendar feeds" })) }

export class Calendars extends Effect.Service<Calendars>()("slotwise/Calendars", {
  scoped: Effect.gen(function*() {
    const storage = yield* Storage
    const events = yield* Events
    const policy = yield* WebhookPolicy
    const reader = Option.getOrElse(yield* Effect.serviceOption(FeedReader), () => noReader)
    const settings = yield* CalendarSyncSettings
    const calendars = storage.collection(CalendarsCollection)
    const staff = storage.collection(StaffCollection)
    const services = storage.collection(ServicesCollection)
    const decodeCreate = decodeInput(CalendarCreate)
    const decodeList = decodeInput(CalendarListParams)
    const leaseTransaction = storage.leaseTransaction ?? storage.transaction

    const requireStaff = findOr404(staff, "staff member")
    const findCalendar = findOr404(calendars, "calendar")

    const findStored = (staffId: string, id: string) =>
      Effect.flatMap(findCalendar(id), (found) =>
        found.staff_id === staffId
          ? Effect.succeed(found)
          : Effect.fail(new NotFound({ detail: `no calendar ${id} of this staff member` })))

    // ---- the resource ----------------------------------------------------------------------

    const create = (staffId: string, input: typeof CalendarCreate.Encoded) =>
      Effect.gen(function*() {
        const fields = yield* decodeCreate(input)
        const feedUrl = fetchableUrl(fields.url)
        yield* checkOutboundUrl(policy, feedUrl)
        const now = yield* currentStamp
        const stored = yield* storage.transaction(Effect.gen(function*() {
          yield* requireStaff(staffId)
          const existing = yield* calendars.listIndexes({ where: [{ column: "staff_id", op: "eq", value: staffId }], columns: [] })
          if (existing.length >= MAX_CALENDARS_PER_STAFF) {
            return yield* new ValidationFailed({
              detail: `a staff member may have at most ${MAX_CALENDARS_PER_STAFF} calendars`,
              errors: [{ path: "url", message: `staff member ${staffId} already has ${existing.length} calendars` }]
            })
          }
          const calendar: StoredCalendar = {
            ...(yield* newResource("calendar")),
            object: "calendar",
            staff_id: staffId,
            name: fields.name ?? new URL(feedUrl).host,
            url: redactedUrl(fields.url),
            status: "pending",
            sync_state: "queued",
            last_synced_at: null,
            last_error: null,
            event_count: 0,
            next_sync_at: now.iso,
            feed_url: feedUrl,
            etag: null,
            last_modified: null,
            failures: 0,
            due_ms: now.ms,
            lease: null
          }
          yield* calendars.insert(calendar)
          yield* events.record("calendar.created", toCalendar(calendar))
          return calendar
        }))
        return toCalendar(stored)
      })

    const list = (staffId: string, input: CalendarListParams = {}) =>
      Effect.gen(function*() {
        const params = yield* decodeList(input)
        yield* requireStaff(staffId)
        const page = yield* listPage(calendars, {
          where: [{ column: "staff_id", op: "eq", value: staffId }],
          limit: params.limit,
          cursor: params.cursor,
          filters: { staff_id: staffId }
        })
        return { ...page, data: page.data.map(toCalendar) }
      })

    const get = (staffId: string, id: string) => Effect.map(findStored(staffId, id), toCalendar)

    const replaceRanges = replaceBusyRanges(storage)
    const removeOne = removeCalendar(storage, events)

    const remove = (staffId: string, id: string) =>
      Effect.tap(storage.transaction(Effect.flatMap(findStored(staffId, id), removeOne)), () => abandonSync(id))

    // ---- syncing ---------------------------------------------------------------------------

    /** The busy times worth reading: a day back to the furthest any service books ahead (capped). */
    const horizon = (nowMs: number) =>
      Effect.map(services.list({}), (all) => {
        const days = Math.min(MAX_HORIZON_DAYS, all.reduce((most, s) => Math.max(most, s.max_advance_days), 1))
        return { start: nowMs - HORIZON_BEFORE_MS, end: nowMs + days * DAY }
      })

    const leased = (calendar: StoredCalendar, nowMs: number, leaseMs: number) =>
      Effect.map(newLease, (lease): StoredCalendar => ({ ...calendar, lease, due_ms: nowMs + leaseMs, sync_state: "queued" }))

    /** Leases up to `max` due calendars of every tenant, taking tenants in turn; rows another instance holds are skipped. */
    const claimDue = (max: number, leaseMs: number) =>
      Effect.flatMap(currentStamp, (now) =>
        // A read first: an idle poll must not take the write lock.
        Effect.flatMap(
          calendars.listAcrossTenants({ where: [{ column: "due_ms", op: "lte", value: now.ms }], limit: 1 }),
          (due) => due.length === 0 ? Effect.succeed([] as Array<Claim>) : claimDueInTransaction(max, leaseMs)
        ))

    const claimDueInTransaction = (max: number, leaseMs: number) =>
      leaseTransaction(Effect.gen(function*() {
        const now = yield* currentStamp
        const rows = yield* calendars.listAcrossTenants({
          where: [{ column: "due_ms", op: "lte", value: now.ms }],
          limit: max * CANDIDATES_PER_CLAIM,
          lock: "skip-locked"
        })
        const byTenant = new FairQueue<(typeof rows)[number]>()
        for (const row of rows) byTenant.push(tenantKey(row.tenant), row)
        const claims: Array<Claim> = []
        for (let next = byTenant.take(() => false); next !== undefined && claims.length < max; next = byTenant.take(() => false)) {
          const { doc, tenant } = next.item
          const calendar = yield* leased(doc, now.ms, leaseMs)
          yield* inTenant(tenant)(calendars.update(calendar))
          claims.push({ tenant, calendar })
        }
        return claims
      }))

    /** Writes the result of a sync, unless the lease was lost meanwhile; the calendar as it now is. */
    const record = (claim: Claim, outcome: FeedResult | FeedFailed, intervalMs: number) =>
      inTenant(claim.tenant)(storage.transaction(Effect.gen(function*() {
        const found = yield* calendars.get(claim.calendar.id)
        if (Option.isNone(found) || found.value.lease !== claim.calendar.lease) return found
        const current = found.value
        const now = yield* currentStamp
        const due = (ms: number) => ({
          due_ms: ms,
          next_sync_at: formatInstant(ms),
          lease: null,
          sync_state: "idle" as const,
          updated_at: now.iso
        })
        let next: StoredCalendar
        if (outcome._tag === "FeedFailed") {
          const failures = current.failures + 1
          next = {
            ...current,
            ...due(now.ms + backoffMs(failures, intervalMs)),
            status: "failing",
            last_error: outcome.message,
            failures
          }
        } else {
          next = { ...current, ...due(now.ms + intervalMs), status: "synced", last_error: null, failures: 0, last_synced_at: now.iso }
          if (outcome._tag === "Fetched") {
            const ranges = mergeIntervals([...outcome.busy].sort((a, b) => a.start - b.start || a.end - b.end))
            yield* replaceRanges(current.id, busyChunks(current, ranges))
            next = { ...next, event_count: outcome.busy.length, etag: outcome.etag, last_modified: outcome.last_modified }
          }
        }
        yield* calendars.update(next)
        // Only a change of status is news: a routine sync every few minutes is not.
        if (next.status !== current.status) yield* events.record("calendar.updated", toCalendar(next), { previous: toCalendar(current) })
        return Option.some(next)
      })))

    /** Reads a leased calendar's feed and records the outcome; a calendar whose staff member is gone is removed. */
    const syncClaimed = (claim: Claim, intervalMs: number) =>
      Effect.gen(function*() {
        const { calendar } = claim
        const member = yield* inTenant(claim.tenant)(staff.get(calendar.staff_id))
        if (Option.isNone(member)) {
          // Deleting a staff member removes their calendars; this catches rows written before that rule.
          yield* inTenant(claim.tenant)(storage.transaction(Effect.flatMap(
            calendars.get(calendar.id),
            Option.match({
              onNone: () => Effect.void,
              onSome: removeOne
            })
          )))
          return Option.none<StoredCalendar>()
        }
        const now = yield* currentStamp
        const window = yield* inTenant(claim.tenant)(horizon(now.ms))
        const outcome = yield* reader.read({
          account_id: claim.tenant.account_id,
          url: calendar.feed_url,
          etag: calendar.status === "synced" || calendar.status === "failing" ? calendar.etag : null,
          last_modified: calendar.last_modified,
          zone: member.value.time_zone,
          window
        }).pipe(
          Effect.merge,
          Effect.map(Option.some),
          // Given up once the calendar is deleted (or leased to another): nothing would be recorded.
          Effect.raceFirst(Effect.as(Effect.catchAll(whileLeased(claim), () => Effect.never), Option.none()))
        )
        // Written whole or not at all, even if the sync is interrupted meanwhile.
        return Option.isSome(outcome)
          ? yield* Effect.uninterruptible(record(claim, outcome.value, intervalMs))
          : Option.none<StoredCalendar>()
      })

    /** The claim's calendar, still leased to it, read every `SYNC_CHECK_MS`; ends when it is not (deleted, or its lease taken). */
    const whileLeased = (claim: Claim) =>
      Effect.repeat(
        inTenant(claim.tenant)(calendars.get(claim.calendar.id)),
        {
          until: (found) => Option.isNone(found) || found.value.lease !== claim.calendar.lease,
          schedule: Schedule.spaced(Duration.millis(SYNC_CHECK_MS))
        }
      )

    /** Marks a claim's sync as running and renews its lease, unless the calendar is gone or leased to another since; whether to go on. */
    const begin = (claim: Claim) =>
      inTenant(claim.tenant)(storage.transaction(Effect.gen(function*() {
        const found = yield* calendars.get(claim.calendar.id)
        if (Option.isNone(found) || found.value.lease !== claim.calendar.lease) return false
        const now = yield* currentStamp
        yield* calendars.update({ ...found.value, sync_state: "running", due_ms: now.ms + settings.leaseMs })
        return true
      })))

    // ---- this instance's queue of syncs ------------------------------------------------------

    const queue = makeSyncQueue(yield* Effect.scope, SYNC_CONCURRENCY, (job: Claim & SyncJob) =>
      Effect.gen(function*() {
        if (yield* Effect.uninterruptible(begin(job))) yield* syncClaimed(job, settings.intervalMs)
      }))
    const enqueue = (claims: ReadonlyArray<Claim>) =>
      queue.enqueue(claims.map((claim) => ({ ...claim, key: tenantKey(claim.tenant), id: claim.calendar.id })))
    const abandonSync = queue.abandon

    /**
     * Claims the calendars that are due, across tenants, as many as this instance's queue has
     * room for and at most `max`, and queues their syncs; how many were claimed. What the sync
     * loop runs: it does not wait for the syncs.
     */
    const syncDue = (options: { readonly max?: number } = {}) =>
      Effect.gen(function*() {
        const max = Math.min(options.max ?? 10, queue.room())
        if (max === 0) return 0
        const claims = yield* claimDue(max, settings.leaseMs)
        yield* enqueue(claims)
        return claims.length
      })

    /**
     * Queues a read of the calendar's feed and answers at once with the calendar, its
     * `sync_state` `queued`; while a sync of it is queued or running, answers with that one.
     */
    const sync = (staffId: string, id: string) =>
      Effect.gen(function*() {
        const tenant = yield* Tenant
        const { calendar, claimed } = yield* storage.transaction(Effect.gen(function*() {
          const current = yield* findStored(staffId, id)
          const now = yield* currentStamp
          if (current.lease !== null && current.due_ms > now.ms) return { calendar: current, claimed: false }
          const next = yield* leased(current, now.ms, settings.leaseMs)
          yield* calendars.update(next)
          return { calendar: next, claimed: true }
        }))
        if (claimed) yield* enqueue([{ tenant, calendar }])
        return toCalendar(calendar)
      })

    return { create, list, get, delete: remove, sync, syncDue } as const
  })
}) {}
