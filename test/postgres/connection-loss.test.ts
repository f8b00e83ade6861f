/**
 * Connections cut under the storage (a failover, a restart, `pg_terminate_backend`, a
 * pooler's idle timeout): whatever was in flight fails as "unavailable" (a 503 to its
 * request), nothing is left to crash the process, and the next statements run on fresh
 * connections; the LISTEN connection comes back by itself.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Cause, Context, Effect, Exit, Fiber, Layer, Logger, Option } from "effect"
import * as net from "node:net"
import pg from "pg"

import { PostgresStorageLive } from "../../adapters/postgres/layer.js"
import { isConnectionLoss } from "../../adapters/postgres/transactions.js"
import { StorageFailure, toProblem } from "../../src/domain/errors.js"
import { Storage } from "../../src/ports/storage.js"
import { as, tenantA, tenantB, thing, Things } from "../storage/contract.js"
import { freePort } from "../multi/processes.js"
import { waitFor } from "../webhooks/receiver.js"
import { createTestDatabase, type TestDatabase } from "./database.js"

let database: TestDatabase
let admin: pg.Client
beforeAll(async () => {
  database = await createTestDatabase()
  admin = new pg.Client({ connectionString: database.url })
  await admin.connect()
})
afterAll(async () => {
  await admin?.end()
  await database?.drop()
})

/** Ends every other session on the test database; the pids it ended. */
const terminateAll = async (): Promise<Array<number>> =>
  (await admin.query<{ pid: number }>(
    // In the select list, the call runs only for the rows the WHERE clause kept.
    "SELECT pid, pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()"
  )).rows.map((row) => row.pid)

/** The sessions LISTENing for signals (the query column keeps a session's last statement). */
const listeners = async (): Promise<Array<number>> =>
  (await admin.query<{ pid: number }>(
    "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND query LIKE 'LISTEN %'"
  )).rows.map((row) => row.pid)

/** A TCP relay from `port` to the server at `target`; resolves to its close. */
const relay = (port: number, target: URL) =>
  new Promise<() => Promise<void>>((resolve, reject) => {
    const sockets = new Set<net.Socket>()
    const server = net.createServer((incoming) => {
      const outgoing = net.connect(Number(target.port || 5432), target.hostname)
      for (const [from, to] of [[incoming, outgoing], [outgoing, incoming]] as const) {
        sockets.add(from)
        from.pipe(to)
        from.on("error", () => to.destroy())
        from.on("close", () => to.destroy())
      }
    })
    server.once("error", reject)
    server.listen(port, "127.0.0.1", () =>
      resolve(() =>
        new Promise<void>((done) => {
          for (const socket of sockets) socket.destroy()
          server.close(() => done())
        })
      ))
  })

describe("postgres connections lost", () => {
  it("tells a lost connection from a wrong statement", () => {
    for (const code of ["57P01", "57P02", "57P03", "08006", "08001", "53300", "ECONNREFUSED", "ECONNRESET"]) {
      expect(isConnectionLoss(Object.assign(new Error("lost"), { code })), code).toBe(true)
    }
    for (const message of ["Connection terminated unexpectedly", "Client has encountered a connection error and is not queryable"]) {
      expect(isConnectionLoss(new Error(message)), message).toBe(true)
    }
    for (const code of ["23505", "42P01", "40P01", "22P02", "57014"]) {
      expect(isConnectionLoss(Object.assign(new Error("wrong"), { code })), code).toBe(false)
    }
    expect(isConnectionLoss(new Error("syntax error at or near"))).toBe(false)
    const problem = toProblem(new StorageFailure({ detail: "events: append: terminating connection", unavailable: true }))
    expect(problem).toMatchObject({ status: 503, code: "storage_unavailable" })
    expect(problem.detail).not.toContain("terminating")
    expect(toProblem(new StorageFailure({ detail: "x" }))).toMatchObject({ status: 500, code: "internal_error" })
  })

  it.live(
    "a server that refuses connections at start: the layer waits for it and builds once it accepts them",
    () =>
      Effect.gen(function*() {
        const port = yield* Effect.promise(freePort)
        const url = new URL(database.url)
        url.port = String(port)
        const warnings: Array<string> = []
        const logger = Logger.replace(
          Logger.defaultLogger,
          Logger.make(({ message }) => warnings.push(String(Array.isArray(message) ? message[0] : message)))
        )
        const building = yield* Effect.fork(Layer.build(PostgresStorageLive({ url: url.toString() })).pipe(Effect.provide(logger)))
        // Refused until something listens on the port: then a relay to the real server opens.
        yield* Effect.promise(() => waitFor(() => warnings.some((w) => w.includes("not reachable at start")), 20_000, "a retry"))
        yield* Effect.acquireRelease(Effect.promise(() => relay(port, new URL(database.url))), (close) => Effect.promise(close))
        const storage = Context.get(yield* Fiber.join(building), Storage)
        yield* storage.collection(Things).insert(thing("started late", 1)).pipe(as(tenantB))
      }).pipe(Effect.scoped),
    60_000
  )

  it.live(
    "every session ended mid-transaction: the transaction fails as unavailable, the process lives on, the next ones commit, LISTEN returns",
    () =>
      Effect.gen(function*() {
        const storage = Context.get(yield* Layer.build(PostgresStorageLive({ url: database.url, maxConnections: 4 })), Storage)
        const things = storage.collection(Things)
        yield* things.insert(thing("before", 1)).pipe(as(tenantA))
        yield* Effect.promise(() => waitFor(async () => (await listeners()).length === 1, 20_000, "the LISTEN session"))
        const [listening] = yield* Effect.promise(listeners)

        // Pooled connections idle and checked out, the LISTEN one: all ended while a
        // transaction holds one of them.
        const cut = yield* storage.transaction(Effect.gen(function*() {
          yield* things.insert(thing("inside", 2))
          yield* Effect.promise(terminateAll)
          yield* things.insert(thing("after the cut", 3))
        })).pipe(as(tenantA), Effect.exit)
        const error = Exit.isFailure(cut) ? Option.getOrUndefined(Cause.failureOption(cut.cause)) : undefined
        expect(error).toBeInstanceOf(StorageFailure)
        expect((error as StorageFailure).unavailable).toBe(true)

        // Fresh connections: the transaction's writes were rolled back, new ones commit.
        yield* things.insert(thing("later", 4)).pipe(as(tenantA))
        const ids = (yield* things.list({}).pipe(as(tenantA))).map((t) => t.id)
        expect(ids.sort()).toEqual(["before", "later"])

        // The LISTEN session is back, as another session.
        yield* Effect.promise(() =>
          waitFor(
            async () => {
              const now = await listeners()
              return now.length === 1 && now[0] !== listening
            },
            20_000,
            "LISTEN again"
          )
        )
      }).pipe(Effect.scoped),
    60_000
  )
})
