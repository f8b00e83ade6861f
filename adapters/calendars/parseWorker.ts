/**
 * Parsing and expanding a feed off the event loop: a 2 MB feed is ~400 ms of synchronous
 * CPU, during which no request would be answered. A pool of worker threads, started on first
 * use, runs `parseBusy` at the lowest CPU priority (Linux; see `lowerThreadPriority`); feeds
 * go in as text, busy ranges come back as a transferred `Float64Array` of start/end pairs.
 *
 * A feed is untrusted, so its parse is bounded three ways besides parse.ts's step budget: a
 * wall-clock limit (`DEFAULT_PARSE_TIME_LIMIT_MS`) and a heap limit (`DEFAULT_PARSE_MEMORY_MB`,
 * the worker's `resourceLimits`), on either of which the worker is terminated, the parse
 * fails with the reason and a new worker takes the next feed; and fairness: each worker
 * parses one feed at a time, an account has at most one feed in the pool's workers at once,
 * and waiting feeds are served an account at a time in turn. So with `DEFAULT_PARSE_WORKERS`
 * workers one account's feed, however hostile, never waits behind another account's. A
 * parse whose sync is given up (the calendar was deleted) is taken out of the queue, or its
 * worker terminated.
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
import { type BusyPairs, FeedParseError, intervalsOf, type ParseLimits, type ParseOptions, parseBusyPairs } from "./parse.js"
import { FairQueue } from "../../src/calendars/fairQueue.js"
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

/** The worker's first message: it can take feeds. */
interface WorkerReady {
  readonly ready: true
}

type ParseReply =
  | { readonly id: number; readonly ok: true; readonly busy: BusyPairs }
  | { readonly id: number; readonly ok: false; readonly parseError: boolean; readonly message: string }

/** The worker's side: answers each request on the parent port. */
export const runParseWorker = () => {
  const port = parentPort
  if (port === null) throw new Error("runParseWorker runs only in a worker thread")
  lowerThreadPriority()
  // Loaded (tsx and all): the time limit of a parse counts from here, not from the thread's start.
  port.postMessage({ ready: true } satisfies WorkerReady)
  port.on("message", (request: ParseRequest) => {
    try {
      const busy = parseBusyPairs(request.text, request.options)
      // Moved, not copied: the buffer becomes the event loop's.
      port.postMessage({ id: request.id, ok: true, busy } satisfies ParseReply, [busy.buffer])
    } catch (error) {
      port.postMessage(
        {
          id: request.id,
          ok: false,
          parseError: error instanceof FeedParseError,
          // Any other error's message may quote the feed: only its kind is told.
          message: error instanceof FeedParseError
            ? error.message
            : `the feed could not be read (the parser failed: ${error instanceof Error ? error.name : "unknown error"}); ${RETRY}`
        } satisfies ParseReply
      )
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

/** A parse that the worker could not finish: it crashed, could not start, ran out of time or memory. */
export class ParseWorkerFailed extends Error {
  // Recognised by name in reader.ts, which imports this module only on first use.
  override readonly name = "ParseWorkerFailed"
}

/** A parse given up by its caller (its signal aborted) before it ended. */
export class ParseAbandoned extends Error {
  override readonly name = "ParseAbandoned"
}

/** Worker threads parsing at once (one feed each). */
export const DEFAULT_PARSE_WORKERS = 2
/** The longest one feed's parse may take before its worker is terminated. */
export const DEFAULT_PARSE_TIME_LIMIT_MS = 30_000
/** Each worker's heap (`resourceLimits.maxOldGenerationSizeMb`): a 5 MB feed needs well under 100 MB. */
export const DEFAULT_PARSE_MEMORY_MB = 256

export interface ParsePoolOptions {
  readonly workers?: number | undefined
  readonly timeLimitMs?: number | undefined
  readonly memoryMb?: number | undefined
  /** The step budgets (parse.ts's constants unless set). */
  readonly limits?: ParseLimits | undefined
}

/** Whose feed it is (feeds of one key are parsed one at a time, keys in turn), and a signal that gives the parse up. */
export interface ParseJob {
  readonly key: string
  readonly signal?: AbortSignal | undefined
}

export interface ParseWorker {
  /** Every busy occurrence of the feed in the window, as `parseBusy` gives them. */
  readonly parse: (text: string, options: ParseOptions, job?: ParseJob) => Promise<Array<Interval>>
  /** Parses asked for and not yet answered (waiting or running). */
  readonly inFlight: () => number
  /** Parses running now, of one key or all. */
  readonly running: (key?: string) => number
  /** Workers started so far (a terminated one is replaced by a new one). */
  readonly started: () => number
  /** Stops every worker; pending parses fail with `ParseWorkerFailed`. The next parse starts new ones. */
  readonly terminate: () => Promise<void>
}

interface Pending {
  readonly key: string
  readonly request: Omit<ParseRequest, "id">
  readonly resolve: (busy: Array<Interval>) => void
  readonly reject: (error: Error) => void
  readonly signal: AbortSignal | undefined
  readonly onAbort: () => void
}

interface Slot {
  worker: Worker | undefined
  /** Whether the worker has loaded and can take feeds. */
  ready: boolean
  job: { readonly id: number; readonly pending: Pending; timer: ReturnType<typeof setTimeout> | undefined } | undefined
}

const RETRY = "the next sync reads it again"

/**
 * Workers started on first use and again after one is terminated; none keeps the process
 * alive while idle (a worker is referenced only while it parses).
 */
export const makeParseWorker = (options: ParsePoolOptions = {}): ParseWorker => {
  const size = Math.max(1, options.workers ?? DEFAULT_PARSE_WORKERS)
  const timeLimitMs = options.timeLimitMs ?? DEFAULT_PARSE_TIME_LIMIT_MS
  const memoryMb = options.memoryMb ?? DEFAULT_PARSE_MEMORY_MB
  const slots: Array<Slot> = Array.from({ length: size }, () => ({ worker: undefined, ready: false, job: undefined }))
  const queue = new FairQueue<Pending>()
  let nextId = 0
  let startedCount = 0

  const runningOf = (key?: string) =>
    slots.filter((slot) => slot.job !== undefined && (key === undefined || slot.job.pending.key === key)).length

  /** Ends the slot's job (if it is still `id`) with `outcome`, and gives the slot the next feed. */
  const settle = (slot: Slot, id: number, outcome: (pending: Pending) => void) => {
    const job = slot.job
    if (job === undefined || job.id !== id) return
    slot.job = undefined
    clearTimeout(job.timer)
    job.pending.signal?.removeEventListener("abort", job.pending.onAbort)
    slot.worker?.unref()
    outcome(job.pending)
    dispatch()
  }

  /** Terminates the slot's worker; its job, if any, fails with `why`. */
  const stop = (slot: Slot, why: string) => {
    const worker = slot.worker
    slot.worker = undefined
    slot.ready = false
    if (worker !== undefined) void worker.terminate()
    if (slot.job !== undefined) settle(slot, slot.job.id, (pending) => pending.reject(new ParseWorkerFailed(why)))
  }

  const start = (slot: Slot): Worker => {
    const moduleUrl = import.meta.url
    const tsxApi = moduleUrl.endsWith(".ts") ? tsxEsmApi(moduleUrl) : undefined
    const worker = new Worker(workerSource(moduleUrl, tsxApi), { eval: true, resourceLimits: { maxOldGenerationSizeMb: memoryMb } })
    startedCount++
    worker.unref()
    worker.on("message", (reply: ParseReply | WorkerReady) => {
      if ("ready" in reply) {
        slot.ready = true
        if (slot.job !== undefined) send(slot, worker)
        return
      }
      settle(slot, reply.id, (pending) => {
        if (reply.ok) pending.resolve(intervalsOf(reply.busy))
        else pending.reject(reply.parseError ? new FeedParseError(reply.message) : new ParseWorkerFailed(reply.message))
      })
    })
    const gone = (why: string) => {
      if (slot.worker !== worker) return
      stop(slot, why)
    }
    worker.on("error", (error: Error & { code?: string }) =>
      gone(
        error.code === "ERR_WORKER_OUT_OF_MEMORY"
          ? `reading the feed needed more than ${memoryMb} MB of memory (the limit); ${RETRY}`
          : `the calendar reader stopped while reading the feed (${error.message}); ${RETRY}`
      ))
    worker.on("exit", (code) => gone(`the calendar reader stopped while reading the feed (exit code ${code}); ${RETRY}`))
    return worker
  }

  /** Hands waiting feeds to idle workers, an account at a time in turn, one feed per account. */
  const dispatch = () => {
    for (const slot of slots) {
      if (slot.job !== undefined) continue
      const next = queue.take((key) => runningOf(key) > 0)
      if (next === undefined) return
      const pending = next.item
      let worker: Worker
      try {
        worker = slot.worker ??= start(slot)
      } catch (error) {
        pending.signal?.removeEventListener("abort", pending.onAbort)
        pending.reject(
          new ParseWorkerFailed(`the calendar reader could not start: ${error instanceof Error ? error.message : String(error)}`)
        )
        continue
      }
      slot.job = { id: nextId++, pending, timer: undefined }
      // Held while a parse is under way, so a caller awaiting it keeps the process running.
      worker.ref()
      if (slot.ready) send(slot, worker)
    }
  }

  /** Gives the slot's job to its loaded worker, and starts the clock on it. */
  const send = (slot: Slot, worker: Worker) => {
    const job = slot.job!
    job.timer = setTimeout(() => stop(slot, `reading the feed took longer than ${timeLimitMs / 1000} s (the limit); ${RETRY}`), timeLimitMs)
    worker.postMessage({ id: job.id, ...job.pending.request } satisfies ParseRequest)
  }

  return {
    parse: (text, parseOptions, job = { key: "" }) =>
      new Promise((resolve, reject) => {
        const { signal } = job
        if (signal?.aborted) return reject(new ParseAbandoned("the parse was given up"))
        const request = {
          text,
          options: {
            zone: parseOptions.zone,
            window: { start: parseOptions.window.start, end: parseOptions.window.end },
            limits: parseOptions.limits ?? options.limits
          }
        }
        const pending: Pending = {
          key: job.key,
          request,
          resolve,
          reject,
          signal,
          onAbort: () => {
            if (queue.remove(job.key, pending)) return reject(new ParseAbandoned("the parse was given up"))
            const slot = slots.find((s) => s.job?.pending === pending)
            if (slot !== undefined) stop(slot, "the parse was given up")
          }
        }
        signal?.addEventListener("abort", pending.onAbort, { once: true })
        queue.push(job.key, pending)
        dispatch()
      }),
    inFlight: () => queue.size + runningOf(),
    running: runningOf,
    started: () => startedCount,
    terminate: async () => {
      const waiting = queue.drain()
      await Promise.all(slots.map(async (slot) => {
        const worker = slot.worker
        stop(slot, `the calendar reader stopped while reading the feed (stopped); ${RETRY}`)
        if (worker !== undefined) await worker.terminate()
      }))
      for (const pending of waiting) {
        pending.signal?.removeEventListener("abort", pending.onAbort)
        pending.reject(new ParseWorkerFailed(`the calendar reader stopped while reading the feed (stopped); ${RETRY}`))
      }
    }
  }
}
