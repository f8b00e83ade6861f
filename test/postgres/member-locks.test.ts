/**
 * Bookings of one account for different staff members do not wait for each other on
 * PostgreSQL; bookings that could take one member's seat do, and so does every other write
 * of the account. A transaction stands in for a create caught mid-way: it holds the very
 * locks a create of that member takes (`memberLockKeys`) until the test lets it go, while
 * real creates from another pool (another process, as far as PostgreSQL can tell) run.
 */
import { Deferred, Effect, ManagedRuntime } from "effect"
import pg from "pg"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { PostgresStorageLive } from "../../adapters/postgres/layer.js"
import { DEFAULT_TENANT, type SchedulingClient } from "../../library.js"
import { lockKeysOf, Storage } from "../../src/ports/storage.js"
import { Tenant } from "../../src/ports/tenant.js"
import { memberLockKeys } from "../../src/scheduling/assignment.js"
import { waitFor } from "../webhooks/receiver.js"
import { postgresScheduling } from "./core.js"
import { createTestDatabase, type TestDatabase } from "./database.js"

const HOUR = 3_600_000
/** Tomorrow 00:00 UTC (the service books up to 400 days ahead; nothing depends on the weekday). */
const tomorrow = () => Math.floor(Date.now() / 86_400_000 + 1) * 86_400_000
const iso = (ms: number) => new Date(ms).toISOString().replace(".000Z", "Z")

let database: TestDatabase
let observer: pg.Client
beforeAll(async () => {
  database = await createTestDatabase()
  observer = new pg.Client({ connectionString: database.url })
  await observer.connect()
})
afterAll(async () => {
  await observer?.end()
  await database?.drop()
})

/** Lock requests of this database that are waiting right now. */
const waitingLocks = async (): Promise<number> =>
  Number(
    (await observer.query(
      "SELECT count(*) AS n FROM pg_locks WHERE locktype = 'advisory' AND NOT granted " +
        "AND database = (SELECT oid FROM pg_database WHERE datname = current_database())"
    )).rows[0].n
  )

/** `promise`, or a failure naming `what` if it has not settled within `ms`. */
const within = <A>(promise: Promise<A>, ms: number, what: string): Promise<A> =>
  Promise.race([
    promise,
    new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`${what}: still waiting after ${ms} ms`)), ms).unref())
  ])

/** A promise's state without waiting for it. */
const settled = (promise: Promise<unknown>) => {
  let done = false
  promise.then(() => (done = true), () => (done = true))
  return () => done
}

let schemas = 0
const setup = async (assignment: "chosen" | "round_robin") => {
  const schema = `member_locks_${++schemas}`
  const api: SchedulingClient = await postgresScheduling({ url: database.url, schema, maxConnections: 5 })
  const staff = await Promise.all(["Ana", "Ben"].map((name) => api.staff.create({ name, time_zone: "UTC" })))
  for (const member of staff) {
    await api.availability.create({
      staff_id: member.id,
      type: "weekly",
      weekdays: [1, 2, 3, 4, 5, 6, 7],
      start_time: "00:00",
      end_time: "24:00"
    })
  }
  const service = await api.services.create({
    name: "Consultation",
    duration_minutes: 60,
    max_advance_days: 400,
    staff_ids: staff.map((s) => s.id),
    assignment
  })
  const client = await api.clients.create({ name: "Cy" })
  // A create caught mid-way, on a pool of its own: it holds the locks and waits for `release`.
  const holder = ManagedRuntime.make(PostgresStorageLive({ url: database.url, schema, maxConnections: 2 }))
  const hold = async (keys: ReadonlyArray<string>) => {
    const locked = Effect.runSync(Deferred.make<void>())
    const release = Effect.runSync(Deferred.make<void>())
    const done = holder.runPromise(
      Effect.gen(function*() {
        const storage = yield* Storage
        yield* storage.keyedTransaction!(
          Effect.gen(function*() {
            yield* lockKeysOf(storage)(keys)
            yield* Deferred.succeed(locked, undefined)
            yield* Deferred.await(release)
          })
        )
      }).pipe(Effect.provideService(Tenant, DEFAULT_TENANT))
    )
    await Effect.runPromise(Deferred.await(locked))
    return { release: () => Effect.runPromise(Deferred.succeed(release, undefined)).then(() => done) }
  }
  const close = () => Promise.all([api.close(), holder.dispose()])
  return { api, staff, service, client, hold, close }
}

describe("PostgreSQL: per-member write locks", () => {
  it("a create for another member goes through while one member's create is open; one for that member waits", async () => {
    const { api, client, close, hold, service, staff } = await setup("chosen")
    const [ana, ben] = staff
    const anaCreate = await hold(memberLockKeys(service, ana!.id))
    const at = iso(tomorrow() + 10 * HOUR)

    // Ben's booking commits while Ana's is still open.
    const forBen = await within(
      api.bookings.create({ service_id: service.id, staff_id: ben!.id, client_id: client.id, start: at }),
      15_000,
      "Ben's booking while Ana's create is open"
    )
    expect(forBen.staff_id).toBe(ben!.id)

    // Ana's waits for the open one: its lock request is seen waiting, and it has not returned.
    const forAna = api.bookings.create({ service_id: service.id, staff_id: ana!.id, client_id: client.id, start: at })
    const anaDone = settled(forAna)
    await waitFor(async () => (await waitingLocks()) === 1, 20_000, "Ana's create to wait for her lock")
    expect(anaDone()).toBe(false)

    // So does a change to the service: any write other than a booking or hold excludes them all.
    const rename = api.services.update(service.id, { name: "Consultation (1 h)" })
    const renameDone = settled(rename)
    await waitFor(async () => (await waitingLocks()) === 2, 20_000, "the service change to wait")
    expect(renameDone()).toBe(false)

    await anaCreate.release()
    expect((await forAna).staff_id).toBe(ana!.id)
    expect((await rename).name).toBe("Consultation (1 h)")
    const booked = (await api.bookings.list({ limit: 10 })).data.map((b) => b.staff_id).sort()
    expect(booked).toEqual([ana!.id, ben!.id].sort())
    await close()
  }, 60_000)

  it("a round-robin create waits for a create of any member of the service, and then picks a free one", async () => {
    const { api, client, close, hold, service, staff } = await setup("round_robin")
    const anaCreate = await hold(memberLockKeys(service, staff[0]!.id))
    const at = iso(tomorrow() + 10 * HOUR)

    const picked = api.bookings.create({ service_id: service.id, client_id: client.id, start: at })
    const pickedDone = settled(picked)
    await waitFor(async () => (await waitingLocks()) === 1, 20_000, "the round-robin create to wait")
    expect(pickedDone()).toBe(false)

    await anaCreate.release()
    const booking = await picked
    expect(booking.assigned_by).toBe("round_robin")
    expect(staff.map((s) => s.id)).toContain(booking.staff_id)
    await close()
  }, 60_000)
})
