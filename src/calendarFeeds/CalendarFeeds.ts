/**
 * Calendar feeds (docs/api.md §12, "Feeds out"): a secret iCalendar URL for one staff member's
 * bookings, or for every staff member's of the account and environment.
 *
 * The token is 256 random bits, shown once in the URL and stored only as its SHA-256. The
 * URL has no credential besides the token, so its lookup is global: every tenant's token
 * hashes are mirrored in one map keyed by the hash (a collection of its own tenant, written in
 * the same transaction as the feed). An entry counts only while the tenant's feed still holds
 * the same hash (compared in constant time), so a rotation, a deletion or a sandbox reset
 * ends the old URL at once.
 */
import { Clock, Effect, Option } from "effect"
import { AccountsCollection, SYSTEM_TENANT } from "../auth/collections.js"
import { constantTimeEqual, sha256Hex } from "../auth/crypto.js"
import {
  ACCOUNT_FEED_ID,
  type CalendarFeed,
  type CalendarFeedCreated,
  FEED_REFRESH_MINUTES,
  FEED_STATUSES,
  FEED_TOKEN_PATTERN,
  feedEventOf,
  feedOf,
  feedWindow,
  inFeed,
  type StoredCalendarFeed
} from "./calendarFeed.js"
import { NotFound, type StorageFailure } from "../domain/errors.js"
import { Events } from "../events/Events.js"
import { type ChangeRecorder, currentStamp, findOr404 } from "../internal/resources.js"
import { CalendarRenderer } from "../ports/calendar.js"
import { hostnameOfBase, PublicUrl } from "../ports/publicUrl.js"
import { BookingsCollection } from "../bookings/collections.js"
import { ClientsCollection } from "../clients/collections.js"
import { ServicesCollection } from "../services/collections.js"
import { StaffCollection } from "../staff/collections.js"
import { type Condition, type CollectionSpec, Storage } from "../ports/storage.js"
import { Tenant, type TenantId } from "../ports/tenant.js"

export const CalendarFeedsCollection: CollectionSpec<StoredCalendarFeed> = {
  name: "calendar_feeds",
  indexes: {},
  order: []
}

/** A feed token's hash (the id) and the feed it opens. */
export interface CalendarFeedToken {
  readonly id: string
  readonly account_id: string
  readonly environment: TenantId["environment"]
  readonly feed_id: string
}

export const CalendarFeedTokensCollection: CollectionSpec<CalendarFeedToken> = {
  name: "calendar_feed_tokens",
  indexes: {},
  order: []
}

/** The tenant of the token map: no account id starts with `_`. */
export const CALENDAR_FEED_TOKENS_TENANT: TenantId = { account_id: "_calendar_feeds", environment: "production" }

/** The most events one feed holds (the earliest first). */
export const MAX_FEED_EVENTS = 5000
/** Clients read per query when naming a feed's bookings. */
const CLIENTS_PER_QUERY = 500
/** The UID host when the public URL has none (a bare path). */
const FALLBACK_UID_HOST = "slotwise"

const TOKEN_BYTES = 32
const BASE64URL = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"

/** 256 bits from the platform CSPRNG as 43 base64url characters. */
const newToken = (): string => {
  const bytes = new Uint8Array(TOKEN_BYTES)
  globalThis.crypto.getRandomValues(bytes)
  let bits = 0
  let value = 0
  let out = ""
  for (const b of bytes) {
    value = (value << 8) | b
    bits += 8
    while (bits >= 6) {
      bits -= 6
      out += BASE64URL[(value >> bits) & 63]
    }
  }
  return bits > 0 ? out + BASE64URL[(value << (6 - bits)) & 63] : out
}

export const feedPath = (token: string): string => `/calendar/${token}.ics`

/** The rendered feed: its body and a strong ETag (a hash of the body). */
export interface RenderedFeed {
  readonly body: string
  readonly etag: string
}

/** The same refusal for every URL that opens no feed, whatever the reason. */
const noFeed = () => new NotFound({ detail: "no calendar feed at this address" })

const asTokens = <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.provideService(effect, Tenant, CALENDAR_FEED_TOKENS_TENANT)

/** Removes a stored feed's entry from the token map, so its URL opens nothing; inside a transaction. */
const forgetToken = (storage: Storage["Type"]) => {
  const tokens = storage.collection(CalendarFeedTokensCollection)
  return (stored: StoredCalendarFeed) =>
    Effect.gen(function*() {
      const entry = yield* asTokens(tokens.get(stored.token_hash))
      if (Option.isSome(entry)) yield* asTokens(tokens.remove(stored.token_hash))
    })
}

/** Turns a feed off (its URL answers 404 from now on) and records `calendar_feed.deleted`; inside a transaction. */
const removeFeed = (storage: Storage["Type"], events: ChangeRecorder) => {
  const feeds = storage.collection(CalendarFeedsCollection)
  const forget = forgetToken(storage)
  return (stored: StoredCalendarFeed) =>
    Effect.gen(function*() {
      yield* forget(stored)
      yield* feeds.remove(stored.id)
      const shown = feedOf(stored)
      yield* events.record("calendar_feed.deleted", shown)
      return shown
    })
}

/** Turns off a staff member's feed, if they have one; inside the transaction that deletes the staff member. */
export const removeFeedOfStaff = (storage: Storage["Type"], events: ChangeRecorder, staffId: string) =>
  Effect.flatMap(
    storage.collection(CalendarFeedsCollection).get(staffId),
    Option.match({ onNone: () => Effect.void, onSome: (stored) => Effect.asVoid(removeFeed(storage, events)(stored)) })
  )

export class CalendarFeeds extends Effect.Service<CalendarFeeds>()("slotwise/CalendarFeeds", {
  effect: Effect.gen(function*() {
    const storage = yield* Storage
    const events = yield* Events
    const renderer = yield* Effect.serviceOption(CalendarRenderer)
    // Read once, when the layer is built: the composition root provides it to the layer.
    const publicUrl = yield* PublicUrl
    const feeds = storage.collection(CalendarFeedsCollection)
    const tokens = storage.collection(CalendarFeedTokensCollection)
    const staff = storage.collection(StaffCollection)
    const services = storage.collection(ServicesCollection)
    const clients = storage.collection(ClientsCollection)
    const bookings = storage.collection(BookingsCollection)
    const accounts = storage.collection(AccountsCollection)
    const findStaff = findOr404(staff, "staff member")
    const forget = forgetToken(storage)
    const removeStored = removeFeed(storage, events)

    /** The feed's id for a staff member (who must exist) or, without one, the account's. */
    const feedId = (staffId: string | undefined) =>
      staffId === undefined ? Effect.succeed(ACCOUNT_FEED_ID) : Effect.as(findStaff(staffId), staffId)

    const missing = (staffId: string | undefined) =>
      new NotFound({
        detail: staffId === undefined ? "this environment has no calendar feed" : `staff member ${staffId} has no calendar feed`
      })

    /**
     * Makes the feed's secret URL under the server's public URL (never a custom domain: a
     * subscription must outlive the domain), replacing (and so ending) any earlier one.
     */
    const create = (staffId?: string): Effect.Effect<CalendarFeedCreated, NotFound | StorageFailure, Tenant> =>
      storage.transaction(Effect.gen(function*() {
        const tenant = yield* Tenant
        const id = yield* feedId(staffId)
        const previous = yield* feeds.get(id)
        if (Option.isSome(previous)) yield* forget(previous.value)
        const token = newToken()
        const stored: StoredCalendarFeed = {
          id,
          staff_id: staffId ?? null,
          token_hash: yield* sha256Hex(token),
          created_at: (yield* currentStamp).iso
        }
        yield* Option.isSome(previous) ? feeds.update(stored) : feeds.insert(stored)
        yield* asTokens(tokens.insert({ id: stored.token_hash, ...tenant, feed_id: id }))
        // The event shows that a feed exists, never its URL or token.
        yield* Option.isSome(previous)
          ? events.record("calendar_feed.rotated", feedOf(stored), { previous: feedOf(previous.value) })
          : events.record("calendar_feed.created", feedOf(stored))
        const base = yield* publicUrl.baseFor(tenant)
        return { ...feedOf(stored), url: `${base}${feedPath(token)}` }
      }))

    /** Whether the feed exists (never its URL). */
    const get = (staffId?: string): Effect.Effect<CalendarFeed, NotFound | StorageFailure, Tenant> =>
      Effect.gen(function*() {
        const found = yield* feeds.get(yield* feedId(staffId))
        return Option.isSome(found) ? feedOf(found.value) : yield* missing(staffId)
      })

    /** Turns the feed off: its URL answers 404 from now on. */
    const remove = (staffId?: string): Effect.Effect<CalendarFeed, NotFound | StorageFailure, Tenant> =>
      storage.transaction(Effect.gen(function*() {
        const id = yield* feedId(staffId)
        const found = yield* feeds.get(id)
        if (Option.isNone(found)) return yield* missing(staffId)
        return yield* removeStored(found.value)
      }))

    /** The feed's title: the staff member's name, or the account's (with its environment). */
    const calendarName = (feed: StoredCalendarFeed, tenant: TenantId) =>
      Effect.gen(function*() {
        if (feed.staff_id !== null) return Option.map(yield* staff.get(feed.staff_id), (m) => m.name)
        const account = yield* Effect.provideService(accounts.get(tenant.account_id), Tenant, SYSTEM_TENANT)
        const name = Option.match(account, { onNone: () => "Bookings", onSome: (a) => a.name })
        return Option.some(tenant.environment === "sandbox" ? `${name} (sandbox)` : name)
      })

    /** Which bookings the feed shows, with which fields. */
    const calendarOf = (feed: StoredCalendarFeed, tenant: TenantId, uidHost: string) =>
      Effect.gen(function*() {
        const name = yield* calendarName(feed, tenant)
        // A staff member deleted since: the feed ends with them.
        if (Option.isNone(name)) return yield* noFeed()
        const now = yield* Clock.currentTimeMillis
        const allServices = yield* services.list({})
        const ownServices = feed.staff_id === null ? allServices : allServices.filter((s) => s.staff_ids.includes(feed.staff_id!))
        const horizon = ownServices.length === 0 ? undefined : Math.max(...ownServices.map((s) => s.max_advance_days))
        const window = feedWindow(now, horizon)
        const where: Array<Condition> = [
          ...(feed.staff_id !== null ? [{ column: "staff_id", op: "eq", value: feed.staff_id } as const] : []),
          { column: "status", op: "in", value: FEED_STATUSES },
          { column: "start_ms", op: "gte", value: window.from },
          { column: "start_ms", op: "lte", value: window.to }
        ]
        const shown = (yield* bookings.list({ where, limit: MAX_FEED_EVENTS })).filter((b) => inFeed(b, now))
        const serviceNames = new Map(allServices.map((s) => [s.id, s.name]))
        const clientNames = new Map<string, string>()
        const clientIds = [...new Set(shown.map((b) => b.client_id))]
        for (let i = 0; i < clientIds.length; i += CLIENTS_PER_QUERY) {
          const batch = clientIds.slice(i, i + CLIENTS_PER_QUERY)
          for (const c of yield* clients.list({ where: [{ column: "id", op: "in", value: batch }] })) clientNames.set(c.id, c.name)
        }
        return {
          name: name.value,
          refreshMinutes: FEED_REFRESH_MINUTES,
          events: shown.map((b) =>
            feedEventOf(
              b,
              { service: serviceNames.get(b.service_id) ?? "Booking", client: clientNames.get(b.client_id) ?? "client" },
              uidHost
            )
          )
        }
      })

    /**
     * The feed a URL's token opens, as iCalendar text, or 404 (the same for every URL that
     * opens none). Needs no tenant: the token says whose it is. The public URL's hostname ends
     * every event's UID, so UIDs do not change with the host or port the feed is fetched through.
     */
    const render = (token: string): Effect.Effect<RenderedFeed, NotFound | StorageFailure> =>
      Effect.gen(function*() {
        if (!FEED_TOKEN_PATTERN.test(token)) return yield* noFeed()
        const hash = yield* sha256Hex(token)
        const entry = yield* asTokens(tokens.get(hash))
        if (Option.isNone(entry)) return yield* noFeed()
        const tenant: TenantId = { account_id: entry.value.account_id, environment: entry.value.environment }
        return yield* Effect.provideService(
          Effect.gen(function*() {
            const feed = yield* feeds.get(entry.value.feed_id)
            if (Option.isNone(feed) || !constantTimeEqual(feed.value.token_hash, hash)) return yield* noFeed()
            const uidHost = hostnameOfBase(yield* publicUrl.baseFor(tenant)) ?? FALLBACK_UID_HOST
            const calendar = yield* calendarOf(feed.value, tenant, uidHost)
            if (Option.isNone(renderer)) return yield* Effect.dieMessage("no calendar renderer is configured")
            const body = renderer.value.render(calendar)
            return { body, etag: `"${(yield* sha256Hex(body)).slice(0, 32)}"` }
          }),
          Tenant,
          tenant
        )
      })

    return {
      create,
      get,
      delete: remove,
      createForAccount: () => create(undefined),
      getForAccount: () => get(undefined),
      deleteForAccount: () => remove(undefined),
      render
    } as const
  })
}) {}
