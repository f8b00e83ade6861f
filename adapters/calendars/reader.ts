/**
 * The `FeedReader` the core syncs calendars with: a guarded, bounded fetch (fetch.ts) and
 * the expansion of the feed's events into busy ranges (parse.ts), run in the process's parse
 * worker (parseWorker.ts) so that a large feed does not hold the event loop.
 */
import { Effect, Layer } from "effect"
import { FeedFailed, FeedReader, type FeedRequest, type FeedResult } from "../../src/ports/feedReader.js"
import type { Interval } from "../../src/scheduling/types.js"
import { type FetchOptions, fetchFeed } from "./fetch.js"
import { FeedParseError, type ParseOptions } from "./parse.js"

export type FeedReaderOptions = FetchOptions

/** Turns a feed's text into busy ranges; rejects with `FeedParseError` for a feed that is not iCalendar. */
export type BusyParser = (text: string, options: ParseOptions) => Promise<Array<Interval>>

/** Imported on first use: in the bundle the worker's module is a chunk of its own, which the worker loads. */
const workerParse: BusyParser = (text, options) =>
  import("./parseWorker.js").then(({ sharedParseWorker }) => sharedParseWorker().parse(text, options))

export const makeFeedReader = (options: FeedReaderOptions, parse: BusyParser = workerParse) => ({
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
            return Effect.tryPromise({
              try: async (): Promise<FeedResult> => ({
                _tag: "Fetched",
                busy: await parse(outcome.text, { zone: request.zone, window: request.window }),
                etag: outcome.etag,
                last_modified: outcome.last_modified
              }),
              catch: (error) =>
                new FeedFailed({
                  message: error instanceof FeedParseError || (error instanceof Error && error.name === "ParseWorkerFailed")
                    ? error.message
                    : `the feed could not be read as iCalendar: ${error instanceof Error ? error.message : String(error)}`
                })
            })
        }
      }
    )
})

export const FeedReaderLive = (options: FeedReaderOptions) => Layer.succeed(FeedReader, makeFeedReader(options))
