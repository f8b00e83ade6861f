/**
 * Parsing and expanding a feed off the event loop: a 2 MB feed is ~400 ms of synchronous
 * CPU, during which no request would be answered. One long-lived worker thread per process,
 * started on the first parse, runs `parseBusy` at the lowest CPU priority (Linux; see
 * `lowerThreadPriority`); feeds go in as text, busy ranges come back as a transferred
 * `Float64Array` of start/end pairs.
 *
 * The worker loads this very module and calls `runParseWorker`. The module's own URL works
 * from sources (a `.ts` file: the worker registers tsx first), from dist/ (tsc output) and
 * from the bundle, where reader.ts imports this module on first use so that esbuild puts it
 * in a chunk of its own (which loads neither the server nor its command line).
 */
import { createRequire } from "node:module"
import * as os from "node:os"
import { pathToFileURL } from "node:url"
import { parentPort, Worker } from "node:worker_threads"
import { type BusyPairs, FeedParseError, intervalsOf, type ParseOptions, parseBusyPairs } from "./parse.js"
import type { Interval } from "../../src/scheduling/types.js"

/** The parse thread's nice value: the event loop's thread (nice 0) wins a contended core. */
export const PARSE_THREAD_NICE = 19

/**
 * Lowers the calling thread's CPU priority; whether it did. On Linux `setpriority` with pid
 * 0 applies to the calling thread only, so called in the worker it leaves the event loop's
 * thread as it was. Elsewhere it would lower the whole process (or is refused), so it is not
 * called; a refusal (a container without the right) leaves the priority as it was.
 */
export const lowerThreadPriority = (
  platform: NodeJS.Platform = process.platform,
  setPriority: (pid: number, priority: number) => void = os.setPriority
): boolean => {
  if (platform !== "linux") return false
  try {
    setPriority(0, PARSE_THREAD_NICE)
    return true
  } catch {
    return false
  }
}

interface ParseRequest {
  readonly id: number
  readonly text: string
  readonly options: ParseOptions
}

type ParseReply =
  | { readonly id: number; readonly ok: true; readonly busy: BusyPairs }
  | { readonly id: number; readonly ok: false; readonly parseError: boolean; readonly message: string }

/** The worker's side: answers each request on the parent port. */
export const runParseWorker = () => {
  const port = parentPort
  if (port === null) throw new Error("runParseWorker runs only in a worker thread")
  lowerThreadPriority()
  port.on("message", (request: ParseRequest) => {
    try {
      const busy = parseBusyPairs(request.text, request.options)
      // Moved, not copied: the buffer becomes the event loop's.
      port.postMessage({ id: request.id, ok: true, busy } satisfies ParseReply, [busy.buffer])
    } catch (error) {
      port.postMessage({
        id: request.id,
        ok: false,
        parseError: error instanceof FeedParseError,
        message: error instanceof Error ? error.message : String(error)
      } satisfies ParseReply)
    }
  })
}

/** The worker's code: CommonJS, so it can load tsx before an ESM `.ts` module. */
const workerSource = (moduleUrl: string, tsxApi: string | undefined) => `
const start = async () => {
  ${tsxApi === undefined ? "" : `(await import(${JSON.stringify(tsxApi)})).register()`}
  ;(await import(${JSON.stringify(moduleUrl)})).runParseWorker()
}
start().catch((error) => { throw error })
`

/** tsx's ESM entry (`require.resolve` finds its CommonJS one, which cannot register in an ESM loader). */
const tsxEsmApi = (from: string) => pathToFileURL(createRequire(from).resolve("tsx/esm/api").replace(/\.cjs$/, ".mjs")).href

/** A parse that the worker could not finish: it crashed, or could not start. */
export class ParseWorkerFailed extends Error {
  // Recognised by name in reader.ts, which imports this module only on first use.
  override readonly name = "ParseWorkerFailed"
}

export interface ParseWorker {
  /** Every busy occurrence of the feed in the window, as `parseBusy` gives them. */
  readonly parse: (text: string, options: ParseOptions) => Promise<Array<Interval>>
  /** Parses sent to the worker and not yet answered. */
  readonly inFlight: () => number
  /** Stops the worker; pending parses fail with `ParseWorkerFailed`. The next parse starts a new one. */
  readonly terminate: () => Promise<void>
}

/** A worker started on first use and again after it dies; it never keeps the process alive while idle. */
export const makeParseWorker = (): ParseWorker => {
  let worker: Worker | undefined
  let nextId = 0
  const pending = new Map<number, { resolve: (busy: Array<Interval>) => void; reject: (error: Error) => void }>()

  const failAll = (why: string) => {
    const waiting = [...pending.values()]
    pending.clear()
    const message = `the calendar reader stopped while reading the feed (${why}); the next sync reads it again`
    for (const { reject } of waiting) reject(new ParseWorkerFailed(message))
  }

  const start = (): Worker => {
    const moduleUrl = import.meta.url
    const tsxApi = moduleUrl.endsWith(".ts") ? tsxEsmApi(moduleUrl) : undefined
    const started = new Worker(workerSource(moduleUrl, tsxApi), { eval: true })
    started.unref()
    started.on("message", (reply: ParseReply) => {
      const waiting = pending.get(reply.id)
      if (waiting === undefined) return
      pending.delete(reply.id)
      if (pending.size === 0) started.unref()
      if (reply.ok) waiting.resolve(intervalsOf(reply.busy))
      else {
        waiting.reject(reply.parseError ? new FeedParseError(reply.message) : new Error(reply.message))
      }
    })
    started.on("error", (error) => {
      if (worker === started) worker = undefined
      failAll(error.message)
    })
    started.on("exit", (code) => {
      if (worker === started) worker = undefined
      failAll(`exit code ${code}`)
    })
    return started
  }

  return {
    parse: (text, options) =>
      new Promise((resolve, reject) => {
        let current: Worker
        try {
          current = worker ??= start()
        } catch (error) {
          return reject(new ParseWorkerFailed(`the calendar reader could not start: ${error instanceof Error ? error.message : String(error)}`))
        }
        const id = nextId++
        pending.set(id, { resolve, reject })
        // Held while a parse is under way, so a caller awaiting it keeps the process running.
        current.ref()
        current.postMessage({ id, text, options: { zone: options.zone, window: { start: options.window.start, end: options.window.end } } } satisfies ParseRequest)
      }),
    inFlight: () => pending.size,
    terminate: async () => {
      const current = worker
      worker = undefined
      if (current !== undefined) await current.terminate()
      failAll("stopped")
    }
  }
}

let shared: ParseWorker | undefined

/** The process's one parse worker. */
export const sharedParseWorker = (): ParseWorker => (shared ??= makeParseWorker())
