/**
 * External calendars (docs/api.md §12 "Busy time in"): a staff member's subscription to an
 * iCalendar feed (the secret address of their Google, Outlook or Apple calendar), whose
 * opaque events block slots and bookings like time off. The feed's address is a secret: it
 * is stored, and shown only as its scheme and host after creation.
 */
import { Schema } from "effect"
import { Instant, ObjectType, Timestamps } from "../domain/common.js"
import { Id } from "../domain/ids.js"

/** Longest feed address accepted. */
export const MAX_FEED_URL = 2048
/** Most calendars one staff member may subscribe to. */
export const MAX_CALENDARS_PER_STAFF = 10

const FEED_SCHEMES = new Set(["http:", "https:", "webcal:", "webcals:"])

/** Why `text` is not a feed address, or `undefined` when it is one. */
export const feedUrlProblem = (text: string): string | undefined => {
  if (!URL.canParse(text)) return "must be an absolute URL (https://…, or webcal://…)"
  const url = new URL(text)
  if (!FEED_SCHEMES.has(url.protocol)) return "must use https, http or webcal"
  if (url.hostname === "") return "must name a host"
  return undefined
}

/** The address fetched: `webcal://` (what calendar apps publish) is HTTPS. */
export const fetchableUrl = (text: string): string => {
  const url = new URL(text)
  if (url.protocol !== "webcal:" && url.protocol !== "webcals:") return url.href
  return `https:${url.href.slice(url.protocol.length)}`
}

/**
 * What the API shows of a feed address: scheme and host, the path, query and any user
 * part hidden (providers put the secret in them: Google's `private-…`, iCloud's token).
 */
export const redactedUrl = (text: string): string => {
  const url = new URL(text)
  return `${url.protocol}//${url.host}/…`
}

export const FeedUrl = Schema.String.pipe(
  Schema.maxLength(MAX_FEED_URL),
  Schema.filter((s) => feedUrlProblem(s) ?? true),
  Schema.annotations({
    identifier: "FeedUrl",
    description: "the feed's address: `https://`, `http://` or `webcal://` (fetched as https)",
    jsonSchema: { type: "string", format: "uri", maxLength: MAX_FEED_URL }
  })
)

export const CalendarName = Schema.String.pipe(
  Schema.minLength(1),
  Schema.maxLength(200),
  Schema.annotations({ description: "a label for the calendar (default: the feed's host)" })
)

export const CalendarCreate = Schema.Struct({
  url: FeedUrl,
  name: Schema.optionalWith(CalendarName, { exact: true })
}).annotations({ identifier: "CalendarCreate" })
export type CalendarCreate = typeof CalendarCreate.Type

export const CalendarStatus = Schema.Literal("pending", "synced", "failing").annotations({
  identifier: "CalendarStatus",
  description: "`pending` until the first sync; `synced` when the last sync succeeded; `failing` when it did not " +
    "(the last good busy times still apply)"
})
export type CalendarStatus = typeof CalendarStatus.Type

export const CalendarSyncState = Schema.Literal("queued", "running", "idle").annotations({
  identifier: "CalendarSyncState",
  description: "`queued` when a read was asked for (a new calendar, or `POST …/sync`) and waits its turn; `running` while the " +
    "feed is read; `idle` otherwise (the next read is at `next_sync_at`)"
})
export type CalendarSyncState = typeof CalendarSyncState.Type

export const Calendar = Schema.Struct({
  id: Id("calendar"),
  object: ObjectType("calendar"),
  staff_id: Id("staff"),
  name: CalendarName,
  url: Schema.String.annotations({
    description: "the feed's scheme and host; the rest of the address is a secret and never shown after creation"
  }),
  status: CalendarStatus,
  sync_state: CalendarSyncState,
  last_synced_at: Schema.NullOr(Instant).annotations({
    description: "when the feed was last read successfully (including an unchanged answer); null before that"
  }),
  last_error: Schema.NullOr(Schema.String).annotations({
    description: "why the last sync failed, in words; null when it succeeded"
  }),
  event_count: Schema.Int.annotations({
    description: "busy occurrences (recurring events expanded) within the booking horizon at the last good sync"
  }),
  next_sync_at: Schema.NullOr(Instant).annotations({
    description: "when the feed is due to be read again (later after repeated failures)"
  }),
  ...Timestamps
}).annotations({ identifier: "Calendar" })
export type Calendar = typeof Calendar.Type

/** A calendar as stored: the public fields, the secret address and the sync state. */
export interface StoredCalendar extends Calendar {
  readonly feed_url: string
  /** The last good answer's validators, sent back as `If-None-Match` / `If-Modified-Since`. */
  readonly etag: string | null
  readonly last_modified: string | null
  /** Failed syncs in a row (the backoff grows with it). */
  readonly failures: number
  /** When the next sync is due, or until when a sync in progress holds the lease. */
  readonly due_ms: number
  /** The holder of the sync in progress, if one is. */
  readonly lease: string | null
}

export const toCalendar = (stored: StoredCalendar): Calendar => {
  const { feed_url: _url, etag: _etag, last_modified: _modified, failures: _failures, due_ms: _due, lease: _lease, ...calendar } = stored
  return calendar
}

/**
 * A calendar's merged busy ranges that start in one week (epoch-aligned), as stored: a few
 * documents per staff member and month, where a row per range would be hundreds to read.
 */
export interface BusyChunk {
  readonly id: string
  readonly calendar_id: string
  readonly staff_id: string
  /** The week's first instant: every range here starts at or after it. */
  readonly from_ms: number
  /** The latest end of the ranges here. */
  readonly to_ms: number
  /** The ranges' starts and ends, in start order. */
  readonly starts: ReadonlyArray<number>
  readonly ends: ReadonlyArray<number>
}

export const BUSY_CHUNK_MS = 7 * 86_400_000

/** `ranges` (sorted, merged) as chunks of `calendar_id`. */
export const busyChunks = (
  calendar: { readonly id: string; readonly staff_id: string },
  ranges: ReadonlyArray<{ readonly start: number; readonly end: number }>
): Array<BusyChunk> => {
  const chunks = new Map<number, { starts: Array<number>; ends: Array<number>; to: number }>()
  for (const { start, end } of ranges) {
    const from = Math.floor(start / BUSY_CHUNK_MS) * BUSY_CHUNK_MS
    let chunk = chunks.get(from)
    if (chunk === undefined) chunks.set(from, chunk = { starts: [], ends: [], to: end })
    chunk.starts.push(start)
    chunk.ends.push(end)
    if (end > chunk.to) chunk.to = end
  }
  return Array.from(chunks, ([from, c]) => ({
    id: `${calendar.id}:${from}`,
    calendar_id: calendar.id,
    staff_id: calendar.staff_id,
    from_ms: from,
    to_ms: c.to,
    starts: c.starts,
    ends: c.ends
  }))
}

const MINUTE = 60_000
const HOUR = 60 * MINUTE
const DAY = 24 * HOUR

/** The longest wait between attempts on a failing feed. */
export const MAX_BACKOFF_MS = 6 * HOUR
/** Never wait less than this after a failure, whatever the sync interval. */
const MIN_BACKOFF_MS = MINUTE

/**
 * How long to wait after the `failures`-th failure in a row: one minute, doubling with each
 * failure, capped at six hours (or the sync interval, when that is longer); a feed that
 * answers again is read at the ordinary interval from then on.
 */
export const backoffMs = (failures: number, intervalMs: number): number => {
  const cap = Math.max(MAX_BACKOFF_MS, intervalMs)
  const exponent = Math.min(Math.max(failures - 1, 0), 30)
  return Math.min(cap, MIN_BACKOFF_MS * 2 ** exponent)
}

/** How far back the busy times read reach: a day, so a meeting in progress still blocks. */
export const HORIZON_BEFORE_MS = DAY
/** The furthest ahead busy times are read, whatever the services allow. */
export const MAX_HORIZON_DAYS = 400
