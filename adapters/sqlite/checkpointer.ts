/**
 * WAL checkpoints off the commit path. By default SQLite checkpoints inside whichever commit
 * fills the WAL past 1,000 pages: that commit copies the pages into the database and syncs
 * it, which here costs ~100-150 µs per booking creation on average. A busy storage instead
 * runs a worker thread with its own connection that checkpoints (PASSIVE: it never blocks
 * the writer or readers) every `intervalMs`, on the machine's other core. The writer keeps
 * SQLite's own checkpoint at `fallbackPages` as a safety net, should the worker fall behind
 * or die. Durability is unchanged: commits are never synced (synchronous=NORMAL), checkpoints
 * are, as before.
 */
import { createRequire } from "node:module"
import { Worker } from "node:worker_threads"
import { Effect } from "effect"

/** The worker's code: CommonJS, loaded from a string so the bundled server needs no file. */
const WORKER_SOURCE = `
const { parentPort, workerData } = require("node:worker_threads")
const Database = require(workerData.driver)
const db = new Database(workerData.filename, { timeout: 0 })
const checkpoint = db.prepare("PRAGMA wal_checkpoint(PASSIVE)")
const run = () => {
  try {
    checkpoint.get()
  } catch {
    // Busy (another process checkpoints) or a passing fault: the next tick tries again.
  }
}
const timer = setInterval(run, workerData.intervalMs)
parentPort.on("message", (message) => {
  if (message !== "stop") return
  clearInterval(timer)
  run()
  db.close()
  parentPort.close()
})
`

export interface CheckpointerOptions {
  readonly filename: string
  /** How often the worker checkpoints (default 100 ms). */
  readonly intervalMs?: number
}

export interface Checkpointer {
  /** Stops the worker after a last checkpoint; waits at most two seconds. */
  readonly stop: Effect.Effect<void>
}

/** Starts the worker, or returns undefined when no worker can be started here. */
export const startCheckpointer = (options: CheckpointerOptions): Checkpointer | undefined => {
  let worker: Worker
  try {
    worker = new Worker(WORKER_SOURCE, {
      eval: true,
      workerData: {
        driver: createRequire(import.meta.url).resolve("better-sqlite3"),
        filename: options.filename,
        intervalMs: options.intervalMs ?? 100
      }
    })
  } catch {
    return undefined
  }
  // Never keeps the process alive; a failed worker only loses the optimisation.
  worker.unref()
  let exited = false
  const exit = new Promise<void>((resolve) => {
    worker.once("exit", () => {
      exited = true
      resolve()
    })
  })
  worker.on("error", () => {})
  return {
    stop: Effect.promise(() => {
      if (exited) return Promise.resolve()
      // Held while it stops: with nothing else pending, an unref'd worker would let the
      // process exit in the middle of the caller's `close()`.
      worker.ref()
      worker.postMessage("stop")
      let timer: ReturnType<typeof setTimeout> | undefined
      const timeout = new Promise<void>((resolve) => (timer = setTimeout(resolve, 2000)))
      return Promise.race([exit, timeout]).then(() => {
        clearTimeout(timer)
        return exited ? undefined : worker.terminate().then(() => undefined)
      })
    })
  }
}
