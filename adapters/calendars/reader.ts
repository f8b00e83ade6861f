/**
 * The `FeedReader` the core syncs calendars with: a guarded, bounded fetch (fetch.ts) and
 * the expansion of the feed's events into busy ranges (parse.ts).
 */
import { Effect, Layer } from "effect"
import { FeedFailed, FeedReader, type FeedRequest, type FeedResult } from "../../src/calendars/feed.js"
import { type FetchOptions, fetchFeed } from "./fetch.js"
import { FeedParseError, parseBusy } from "./parse.js"

export type FeedReaderOptions = FetchOptions

export const makeFeedReader = (options: FeedReaderOptions) => ({
  read: (request: FeedRequest): Effect.Effect<FeedResult, FeedFailed> =>
    Effect.flatMap(
      Effect.promise(() => fetchFeed(request.url, request, options)),
      (outcome): Effect.Effect<FeedResult, FeedFailed> => {
        switch (outcome._tag) {
          case "Failed":
            return Effect.fail(new FeedFailed({ message: outcome.message }))
          case "NotModified":
            return Effect.succeed({ _tag: "NotModified" })
          case "Body":
            return Effect.try({
              try: (): FeedResult => ({
                _tag: "Fetched",
                busy: parseBusy(outcome.text, { zone: request.zone, window: request.window }),
                etag: outcome.etag,
                last_modified: outcome.last_modified
              }),
              catch: (error) =>
                new FeedFailed({
                  message: error instanceof FeedParseError
                    ? error.message
                    : `the feed could not be read as iCalendar: ${error instanceof Error ? error.message : String(error)}`
                })
            })
        }
      }
    )
})

export const FeedReaderLive = (options: FeedReaderOptions) => Layer.succeed(FeedReader, makeFeedReader(options))
