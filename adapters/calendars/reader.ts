/**
 * The `FeedReader` the core syncs calendars with: a guarded, bounded fetch (fetch.ts) and
 * the expansion of the feed's events into busy ranges (parse.ts), run in the reader's pool of
 * parse workers (parseWorker.ts) so that a large feed does not hold the event loop, within
 * its time and memory limits and in turn across accounts. The pool is started on the first
 * parse and stopped with the layer. A sync given up (its fiber interrupted: the calendar was
 * deleted) abandons its fetch and its parse.
 */
import { Effect, Layer } from "effect"
import { FeedFailed, FeedReader, type FeedRequest, type FeedResult } from "../../src/ports/feedReader.js"
import type { Interval } from "../../src/scheduling/types.js"
import { type FetchOptions, fetchFeed } from "./fetch.js"
import { FeedParseError, type ParseOptions } from "./parse.js"
import type { ParseJob, ParsePoolOptions, ParseWorker } from "./parseWorker.js"

export interface FeedReaderOptions extends FetchOptions {
  /** The parse workers' number and limits (parseWorker.ts's defaults unless set). */
  readonly parse?: ParsePoolOptions | undefined
}

/** Turns a feed's text into busy ranges; rejects with `FeedParseError` for a feed that is not iCalendar. */
export type BusyParser = (text: string, options: ParseOptions, job: ParseJob) => Promise<Array<Interval>>

/** A pool of parse workers made on first use: in the bundle the worker's module is a chunk of its own, which the worker loads. */
export const lazyParsePool = (options: ParsePoolOptions = {}) => {
  let pool: Promise<ParseWorker> | undefined
  return {
    parse: ((text, parseOptions, job) =>
      (pool ??= import("./parseWorker.js").then(({ makeParseWorker }) => makeParseWorker(options)))
        .then((workers) => workers.parse(text, parseOptions, job))) satisfies BusyParser,
    close: (): Promise<void> => pool === undefined ? Promise.resolve() : pool.then((workers) => workers.terminate())
  }
}

const failureMessage = (error: unknown) =>
  error instanceof FeedParseError || (error instanceof Error && error.name === "ParseWorkerFailed")
    ? error.message
    : `the feed could not be read as iCalendar: ${error instanceof Error ? error.name : "unknown error"}`

export const makeFeedReader = (options: FeedReaderOptions, parse: BusyParser) => ({
  read: (request: FeedRequest): Effect.Effect<FeedResult, FeedFailed> =>
    Effect.flatMap(
      Effect.promise((signal) => fetchFeed(request.url, request, { ...options, signal })),
      (outcome): Effect.Effect<FeedResult, FeedFailed> => {
        switch (outcome._tag) {
          case "Failed":
            return Effect.fail(new FeedFailed({ message: outcome.message }))
          case "NotModified":
            return Effect.succeed({ _tag: "NotModified" })
          case "Body":
            return Effect.tryPromise({
              try: async (signal): Promise<FeedResult> => ({
                _tag: "Fetched",
                busy: await parse(outcome.text, { zone: request.zone, window: request.window }, { key: request.account_id, signal }),
                etag: outcome.etag,
                last_modified: outcome.last_modified
              }),
              catch: (error) => new FeedFailed({ message: failureMessage(error) })
            })
        }
      }
    )
})

export const FeedReaderLive = (options: FeedReaderOptions) =>
  Layer.scoped(
    FeedReader,
    Effect.map(
      Effect.acquireRelease(Effect.sync(() => lazyParsePool(options.parse)), (pool) => Effect.promise(pool.close)),
      (pool) => makeFeedReader(options, pool.parse)
    )
  )
