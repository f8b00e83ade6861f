/**
 * The feed port: reading one iCalendar feed into busy ranges. The adapter
 * (adapters/calendars) fetches it under the outbound address guard, with the size, time and
 * redirect limits, and expands its events; the core decides what to keep and when to read
 * again.
 */
import { Context, Data, type Effect } from "effect"
import type { Interval } from "../scheduling/types.js"

export interface FeedRequest {
  /** The account whose feed it is: accounts' feeds are read in turn, so none waits behind another's. */
  readonly account_id: string
  /** The address to fetch (`webcal://` already turned into `https://`). */
  readonly url: string
  /** The last good answer's validators, for a conditional request. */
  readonly etag: string | null
  readonly last_modified: string | null
  /** The staff member's IANA zone: floating times and all-day dates are read in it. */
  readonly zone: string
  /** Busy time outside this range is of no interest (the booking horizon). */
  readonly window: Interval
}

export type FeedResult =
  | {
    readonly _tag: "Fetched"
    /** Every opaque occurrence within the window, clipped to it, in any order. */
    readonly busy: ReadonlyArray<Interval>
    readonly etag: string | null
    readonly last_modified: string | null
  }
  /** The feed answered 304: what is stored still holds. */
  | { readonly _tag: "NotModified" }

/** Why a feed could not be read, in words an owner can act on (never the secret address). */
export class FeedFailed extends Data.TaggedError("FeedFailed")<{ readonly message: string }> {}

export interface FeedReaderService {
  readonly read: (request: FeedRequest) => Effect.Effect<FeedResult, FeedFailed>
}

export class FeedReader extends Context.Tag("slotwise/FeedReader")<FeedReader, FeedReaderService>() {}
