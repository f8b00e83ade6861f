/**
 * A COMMIT that succeeds on the server while its answer is lost (the connection breaks on the
 * way back): the request answers 503, yet its write is durable. The documented retry with the
 * same Idempotency-Key must be given that write (the success status and the resource it
 * made), never make it a second time nor refuse it as a clash with itself.
 *
 * Deterministic: the server reaches PostgreSQL through a relay on 127.0.0.1; a trigger on the
 * table written raises a NOTICE, and once it has passed through a connection, the relay drops
 * that connection when the server's answer to its next COMMIT arrives, instead of passing it on.
 */
import * as net from "node:net"
import pg from "pg"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import {
  ADMIN_TOKEN,
  client,
  type Client,
  expectProblem,
  expectStatus,
  MONDAY_9,
  seed,
  startServer,
  type TestServer
} from "../http/harness.js"
import { freePort } from "../multi/processes.js"
import { createTestDatabase, type TestDatabase } from "./database.js"

const MARK = "slotwise-test: lose this commit"
/** CommandComplete for COMMIT: 'C', length 11, "COMMIT\0". */
const COMMIT_DONE = Buffer.from([0x43, 0, 0, 0, 11, ...Buffer.from("COMMIT"), 0])

interface LosingRelay {
  readonly url: string
  /** Loses the answer to the next COMMIT of a transaction that raised MARK. */
  readonly arm: () => void
  /** How many answers it lost. */
  readonly lost: () => number
  readonly close: () => Promise<void>
}

const losingRelay = async (target: URL): Promise<LosingRelay> => {
  const port = await freePort()
  const sockets = new Set<net.Socket>()
  let armed = false
  let lost = 0
  const server = net.createServer((incoming) => {
    const outgoing = net.connect(Number(target.port || 5432), target.hostname)
    let doomed = false
    // The end of the previous chunk, so that a message split across two is still seen.
    let tail = Buffer.alloc(0)
    for (const socket of [incoming, outgoing]) {
      sockets.add(socket)
      socket.on("error", () => {})
      socket.on("close", () => {
        incoming.destroy()
        outgoing.destroy()
      })
    }
    incoming.on("data", (chunk: Buffer) => outgoing.write(chunk))
    outgoing.on("data", (chunk: Buffer) => {
      const seen = Buffer.concat([tail, chunk])
      tail = seen.subarray(Math.max(0, seen.length - MARK.length))
      const marked = armed && seen.includes(MARK)
      doomed ||= marked
      if (doomed && seen.indexOf(COMMIT_DONE, marked ? seen.indexOf(MARK) : 0) >= 0) {
        armed = false
        doomed = false
        lost++
        incoming.destroy()
        outgoing.destroy()
        return
      }
      incoming.write(chunk)
    })
  })
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve))
  const url = new URL(target)
  url.host = `127.0.0.1:${port}`
  return {
    url: url.toString(),
    arm: () => (armed = true),
    lost: () => lost,
    close: () =>
      new Promise<void>((done) => {
        for (const socket of sockets) socket.destroy()
        server.close(() => done())
      })
  }
}

let database: TestDatabase
let admin: pg.Client
let relay: LosingRelay
let server: TestServer
let api: Client

beforeAll(async () => {
  database = await createTestDatabase()
  relay = await losingRelay(new URL(database.url))
  server = await startServer({ storage: { postgres: relay.url }, webhooks: false })
  api = client(server.url, server.first.keys.sandbox.secret)
  admin = new pg.Client({ connectionString: database.url })
  await admin.connect()
  await admin.query(`CREATE FUNCTION lose_commit_mark() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN RAISE NOTICE '${MARK}'; RETURN NEW; END $$`)
}, 60_000)

afterAll(async () => {
  await server?.close()
  await relay?.close()
  await admin?.end()
  await database?.drop()
})

/** Marks inserts into the collection's table from now on. */
const markInserts = async (collection: string) => {
  await admin.query(`DROP TRIGGER IF EXISTS lose_${collection} ON c_${collection}`)
  await admin.query(`CREATE TRIGGER lose_${collection} AFTER INSERT ON c_${collection} FOR EACH ROW EXECUTE FUNCTION lose_commit_mark()`)
}

const count = async (collection: string, where = "TRUE", params: ReadonlyArray<unknown> = []) =>
  Number((await admin.query(`SELECT count(*) AS n FROM c_${collection} WHERE ${where}`, [...params])).rows[0].n)

const withKey = (key: string) => ({ headers: { "idempotency-key": key } })

/** The request with `key`, its COMMIT's answer lost: 503, then the retry's reply. */
const lostThenRetried = async (path: string, body: unknown, key: string, caller: Client = api, headers: Record<string, string> = {}) => {
  const options = { headers: { ...headers, "idempotency-key": key } }
  relay.arm()
  const lost = relay.lost()
  expectProblem(await caller.post(path, body, options), 503, "storage_unavailable")
  expect(relay.lost()).toBe(lost + 1)
  return caller.post(path, body, options)
}

describe("a COMMIT whose answer is lost, retried with its Idempotency-Key", () => {
  it("creating a client: the retry answers 201 with the client made, and there is one", async () => {
    await markInserts("clients")
    const retried = expectStatus(await lostThenRetried("/v1/clients", { name: "Lost Answer" }, "client-lost"), 201)
    expect(retried.name).toBe("Lost Answer")
    expect(await count("clients", "doc->>'name' = $1", ["Lost Answer"])).toBe(1)
    expect(expectStatus(await api.get(`/v1/clients/${retried.id}`), 200).id).toBe(retried.id)
    // Later repeats replay the same answer.
    const again = await api.post("/v1/clients", { name: "Lost Answer" }, withKey("client-lost"))
    expect(again.headers.get("idempotent-replayed")).toBe("true")
    expect(expectStatus(again, 201).id).toBe(retried.id)
  })

  it("booking: the retry answers 201 with the caller's own booking, never slot_unavailable", async () => {
    const s = await seed(api)
    await markInserts("bookings")
    const body = { service_id: s.service.id, staff_id: s.staff.id, client_id: s.client.id, start: MONDAY_9 }
    const booked = expectStatus(await lostThenRetried("/v1/bookings", body, "booking-lost"), 201)
    expect(booked).toMatchObject({ object: "booking", start: MONDAY_9, client_id: s.client.id, status: "confirmed" })
    expect(typeof booked.manage_url).toBe("string")
    expect(await count("bookings", "doc->>'client_id' = $1", [s.client.id])).toBe(1)
    expect(expectStatus(await api.get(`/v1/bookings/${booked.id}`), 200).start).toBe(MONDAY_9)
  })

  it("recording a payment: the retry answers 201 with the payment and the booking, paid once", async () => {
    const s = await seed(api, { price: { amount: 5000, currency: "EUR" } })
    const booking = expectStatus(
      await api.post("/v1/bookings", {
        service_id: s.service.id,
        staff_id: s.staff.id,
        client_id: s.client.id,
        start: "2027-03-29T11:00:00Z"
      }),
      201
    )
    await markInserts("payments")
    const path = `/v1/bookings/${booking.id}/payments`
    const paid = expectStatus(await lostThenRetried(path, { amount: { amount: 2000, currency: "EUR" } }, "payment-lost"), 201)
    expect(paid.payment).toMatchObject({ object: "payment", booking_id: booking.id, amount: { amount: 2000, currency: "EUR" } })
    expect(paid.booking.amount_paid).toEqual({ amount: 2000, currency: "EUR" })
    expect(await count("payments", "doc->>'booking_id' = $1", [booking.id])).toBe(1)
    expect(expectStatus(await api.get(`/v1/bookings/${booking.id}`), 200).amount_paid).toEqual({ amount: 2000, currency: "EUR" })
  })

  it("a visitor's booking through a publishable key: the retry answers 201 with the public view, booked once", async () => {
    const origin = "https://shop.example"
    const shop = expectStatus(
      await client(server.url, ADMIN_TOKEN).post("/admin/v1/accounts", { name: "Shop", plan: "business", allowed_origins: [origin] }),
      201
    )
    const s = await seed(client(server.url, shop.keys.sandbox.secret))
    await markInserts("bookings")
    const visitor = client(server.url, shop.keys.sandbox.publishable)
    const body = { service_id: s.service.id, start: MONDAY_9, client: { name: "Web", email: "web@example.com" } }
    const booked = expectStatus(await lostThenRetried("/v1/bookings", body, "visitor-lost", visitor, { origin }), 201)
    expect(booked).toMatchObject({ object: "booking", start: MONDAY_9, service_id: s.service.id })
    expect(booked.client_id).toBeUndefined()
    expect(booked.manage_url).toBeUndefined()
    expect(await count("bookings", "account_id = $1", [shop.account.id])).toBe(1)
  })
})
