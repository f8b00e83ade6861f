/**
 * Signals between processes on one database, over LISTEN/NOTIFY: a commit that appended
 * events wakes every instance's webhook dispatcher at once (instead of at its next poll),
 * and a revoked or rotated API key clears every instance's credential cache.
 *
 * Sending. `publish` runs after the commit (never for a rollback) and is coalesced: every
 * topic published while the event loop turns goes out in one `pg_notify` statement on a
 * pooled connection, so a burst of writes costs one round trip, and no transaction holds
 * its locks for it. A process that dies between its commit and the notify sends nothing;
 * that is why signals are hints (the dispatcher still polls, the cache still expires).
 *
 * Receiving. One dedicated connection LISTENs. When it breaks, it is reopened in the
 * background (250 ms growing to 5 s), and every listener is called once it is back, since
 * signals sent meanwhile are lost. The channel is named after the schema, so deployments in
 * different schemas of one database do not wake each other.
 *
 * A storage does not hear its own signals: every publisher acts in its own process at once
 * (the dispatcher hears this process's events from `Events`, caches are cleared, reminder
 * workers poked), so the echo only repeated that work, a webhook fan-out after every commit.
 * It is told apart by the server process that sent it: one of this pool's connections.
 */
import { Effect, type Scope } from "effect"
import pg from "pg"
import type { SignalTopic, StorageSignals } from "../../src/ports/storage.js"

const TOPICS: ReadonlyArray<SignalTopic> = ["events", "credentials", "domains", "reminders"]

export interface SignalsOptions {
  readonly url: string
  readonly schema?: string | undefined
  readonly pool: pg.Pool
  /** The storage's after-commit hook: a publish inside a transaction waits for its commit. */
  readonly afterCommit: (effect: Effect.Effect<void>) => Effect.Effect<void>
}

const warn = (message: string) => Effect.runFork(Effect.logWarning(`slotwise postgres: ${message}`))

export const makeSignals = (options: SignalsOptions): Effect.Effect<StorageSignals, never, Scope.Scope> =>
  Effect.gen(function*() {
    const channel = options.schema === undefined ? "slotwise_signals" : `slotwise_signals_${options.schema}`.toLowerCase()
    const listeners = new Map<SignalTopic, Set<() => void>>(TOPICS.map((topic) => [topic, new Set()]))
    let closed = false

    const call = (topic: SignalTopic) => {
      for (const listener of listeners.get(topic) ?? []) {
        try {
          listener()
        } catch {
          // one listener's failure must not keep the others from hearing
        }
      }
    }

    // The server processes of the pool's connections this storage notified from. A pooler in
    // between may report other numbers: its echoes then come back, as they all did before.
    const sentFrom = new Set<number>()
    const backendOf = (connection: pg.PoolClient): number => (connection as unknown as { readonly processID: number }).processID
    const forget = (connection: pg.PoolClient) => {
      sentFrom.delete(backendOf(connection))
    }
    options.pool.on("remove", forget)

    // Receiving: one connection of its own, reopened when it breaks.
    let client: pg.Client | undefined
    let retryMs = 250
    let timer: ReturnType<typeof setTimeout> | undefined
    const listen = (reopened: boolean) => {
      if (closed) return
      const c = new pg.Client({ connectionString: options.url, connectionTimeoutMillis: 5000 })
      client = c
      let failed = false
      const broken = (error: Error) => {
        if (failed || closed) return
        failed = true
        warn(`the LISTEN connection broke (${error.message}); reopening it`)
        c.end().catch(() => undefined)
        timer = setTimeout(() => listen(true), retryMs)
        retryMs = Math.min(retryMs * 2, 5000)
      }
      c.on("error", broken)
      c.on("end", () => broken(new Error("connection ended")))
      c.on("notification", (message) => {
        if (sentFrom.has(message.processId)) return
        const topic = message.payload as SignalTopic
        if (listeners.has(topic)) call(topic)
      })
      c.connect()
        .then(() => c.query(`LISTEN ${pg.escapeIdentifier(channel)}`))
        .then(() => {
          retryMs = 250
          if (reopened) { for (const topic of TOPICS) call(topic) }
        }, broken)
    }
    listen(false)
    yield* Effect.addFinalizer(() =>
      Effect.promise(async () => {
        closed = true
        options.pool.off("remove", forget)
        if (timer !== undefined) clearTimeout(timer)
        await client?.end().catch(() => undefined)
      })
    )

    // Sending: topics published during this turn of the event loop, in one statement.
    const pending = new Set<SignalTopic>()
    let scheduled = false
    const flush = () => {
      scheduled = false
      if (closed || pending.size === 0) return
      const topics = [...pending]
      pending.clear()
      options.pool.connect()
        .then(async (connection) => {
          // Known before the notification can arrive.
          sentFrom.add(backendOf(connection))
          try {
            await connection.query("SELECT pg_notify($1, topic) FROM unnest($2::text[]) AS topic", [channel, topics])
            connection.release()
          } catch (error) {
            connection.release(error as Error)
            throw error
          }
        })
        .catch((error: Error) => warn(`cannot notify other instances (${error.message})`))
    }
    const publish = (topic: SignalTopic) =>
      options.afterCommit(Effect.sync(() => {
        pending.add(topic)
        if (!scheduled) {
          scheduled = true
          setImmediate(flush)
        }
      }))

    const subscribe = (topic: SignalTopic, listener: () => void) => {
      listeners.get(topic)?.add(listener)
      return () => {
        listeners.get(topic)?.delete(listener)
      }
    }

    return { publish, subscribe }
  })
