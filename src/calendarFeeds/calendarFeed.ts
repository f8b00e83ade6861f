/**
 * Calendar feeds (docs/api.md §12, "Feeds out"): a secret iCalendar URL per staff member, or
 * for the whole account and environment, that calendar apps subscribe to. This module decides
 * which bookings a feed shows and with which fields; an adapter writes them as RFC 5545 text.
 */
import { Schema } from "effect"
import type { Booking, BookingStatus } from "../bookings/booking.js"
import { Instant, toMillis } from "../domain/common.js"
import { Id } from "../domain/ids.js"

const DAY = 86_400_000

/** How far back a feed reaches, and how long a cancelled booking stays in it after its cancellation. */
export const FEED_PAST_DAYS = 30
/** The feed reaches as far ahead as its services can be booked, but never past this. */
export const FEED_HORIZON_CAP_DAYS = 365
/** What calendar apps are asked to wait between refreshes (`REFRESH-INTERVAL`, `X-PUBLISHED-TTL`). */
export const FEED_REFRESH_MINUTES = 15

/** A feed's token: 43 base64url characters, 256 bits of randomness. */
export const FEED_TOKEN_PATTERN = /^[A-Za-z0-9_-]{43}$/

export const CalendarFeed = Schema.Struct({
  object: Schema.Literal("calendar_feed"),
  staff_id: Schema.NullOr(Id("staff")).annotations({
    description: "the staff member whose bookings it holds; null for the account's feed"
  }),
  created_at: Instant.annotations({ description: "when the current URL was made" })
}).annotations({
  identifier: "CalendarFeed",
  description: "A calendar feed that exists; its URL is shown only when it is made"
})
export type CalendarFeed = typeof CalendarFeed.Type

export const CalendarFeedCreated = Schema.Struct({
  ...CalendarFeed.fields,
  url: Schema.String.annotations({
    description: "the secret iCalendar URL to subscribe to, `{public_url}/calendar/<token>.ics`: shown only now; " +
      "making a new one ends this one"
  })
}).annotations({ identifier: "CalendarFeedCreated" })
export type CalendarFeedCreated = typeof CalendarFeedCreated.Type

/** What storage keeps of a feed: its token only as a SHA-256 hash. The id is the staff id, or `account`. */
export interface StoredCalendarFeed {
  readonly id: string
  readonly staff_id: string | null
  readonly token_hash: string
  readonly created_at: string
}

export const ACCOUNT_FEED_ID = "account"

export const feedOf = (stored: StoredCalendarFeed): CalendarFeed => ({
  object: "calendar_feed",
  staff_id: stored.staff_id,
  created_at: stored.created_at
})

export type FeedEventStatus = "CONFIRMED" | "TENTATIVE" | "CANCELLED"

/** One `VEVENT`, every time in epoch milliseconds (UTC). */
export interface FeedEvent {
  readonly uid: string
  readonly sequence: number
  readonly status: FeedEventStatus
  readonly start: number
  readonly end: number
  /** `DTSTAMP` and `LAST-MODIFIED`: the booking's last change, so an unchanged feed renders to the same bytes. */
  readonly modified: number
  readonly summary: string
  readonly description: string | null
}

export interface FeedCalendar {
  readonly name: string
  readonly refreshMinutes: number
  readonly events: ReadonlyArray<FeedEvent>
}

const STATUS_OF: Partial<Record<BookingStatus, FeedEventStatus>> = {
  pending: "TENTATIVE",
  confirmed: "CONFIRMED",
  cancelled: "CANCELLED"
}

/** The statuses a feed reads from storage. */
export const FEED_STATUSES: ReadonlyArray<BookingStatus> = ["pending", "confirmed", "cancelled"]

/** The window of starts a feed covers at `now`, given the largest `max_advance_days` of its services. */
export const feedWindow = (now: number, maxAdvanceDays: number | undefined) => ({
  from: now - FEED_PAST_DAYS * DAY,
  to: now + Math.min(maxAdvanceDays ?? FEED_HORIZON_CAP_DAYS, FEED_HORIZON_CAP_DAYS) * DAY
})

/**
 * Whether a booking whose start lies in the window belongs in the feed at `now`: pending and
 * confirmed ones do; a cancelled one for 30 days after its cancellation (its last change).
 */
export const inFeed = (booking: Booking, now: number): boolean =>
  booking.status === "cancelled"
    ? toMillis(booking.updated_at) >= now - FEED_PAST_DAYS * DAY
    : STATUS_OF[booking.status] !== undefined

/** Text without the control characters iCalendar forbids (all but tab and line breaks), for data stored before they were refused. */
const readable = (text: string): string => text.replace(/[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F]/g, "")

/** The `VEVENT` of a booking; `uidHost` is the server's public host, so the UID stays the same for every fetch. */
export const feedEventOf = (
  booking: Booking,
  names: { readonly service: string; readonly client: string },
  uidHost: string
): FeedEvent => ({
  uid: `${booking.id}@${uidHost}`,
  sequence: booking.revision ?? 0,
  status: STATUS_OF[booking.status] ?? "CANCELLED",
  start: toMillis(booking.start),
  end: toMillis(booking.end),
  modified: toMillis(booking.updated_at),
  summary: readable(`${names.service}: ${names.client}`),
  description: booking.notes === null ? null : readable(booking.notes)
})
