/**
 * The idempotency step on every in-process storage (memory, SQLite; PostgreSQL in
 * test/postgres/lost-commit.test.ts): a request whose write committed but whose answer was
 * lost (here the step fails right after the use case's commit, as a lost COMMIT answer
 * does) answers 503; its retry with the same key is given what committed, never writes again.
 */
import { HttpServerResponse } from "@effect/platform"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Option } from "effect"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import * as path from "node:path"
import { afterAll } from "vitest"
import { makeIdempotent } from "../../adapters/http/middleware/idempotency.js"
import { MemoryStorageLive } from "../../adapters/memory/storage.js"
import { SqliteStorageLive } from "../../adapters/sqlite/layer.js"
import type { Principal } from "../../src/keys/ApiKeys.js"
import { IdempotencyCollection } from "../../src/auth/collections.js"
import { Availability } from "../../src/availability/Availability.js"
import { Bookings } from "../../src/bookings/Bookings.js"
import { Clients } from "../../src/clients/Clients.js"
import { StorageFailure } from "../../src/domain/errors.js"
import { Idempotency } from "../../src/idempotency/Idempotency.js"
import { CoreLive } from "../../src/layers.js"
import { BookingsCollection, ClientsCollection } from "../../src/ports/collections.js"
import { Storage } from "../../src/ports/storage.js"
import type { TenantId } from "../../src/ports/tenant.js"
import { Services } from "../../src/services/Services.js"
import { Staff } from "../../src/staff/Staff.js"
import { TestClockAt } from "../../src/testing/testClock.js"
import { WebhookPolicy } from "../../src/webhooks/policy.js"
import { as } from "../storage/contract.js"

const dir = mkdtempSync(path.join(tmpdir(), "slotwise-lost-answer-"))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const tenant: TenantId = { account_id: `acc_${"7".repeat(26)}`, environment: "sandbox" }
/** The step reads only the caller's tenant from the principal. */
const principal = { tenant } as Principal

const storages: ReadonlyArray<readonly [string, () => Layer.Layer<Storage, unknown>]> = [
  ["memory", () => MemoryStorageLive],
  ["sqlite", () => SqliteStorageLive({ filename: path.join(dir, `lost-${Math.random().toString(36).slice(2)}.db`) })]
]

const jsonOf = (response: HttpServerResponse.HttpServerResponse) =>
  JSON.parse(response.body._tag === "Uint8Array" ? new TextDecoder().decode(response.body.body) : "null")

/** The core and the idempotency step over a fresh store, at a fixed time. */
const setup = (storage: () => Layer.Layer<Storage, unknown>) =>
  Layer.mergeAll(CoreLive, Idempotency.Default).pipe(
    Layer.provide(Layer.succeed(WebhookPolicy, { allowPrivate: false })),
    Layer.provideMerge(storage()),
    Layer.provideMerge(TestClockAt(Date.parse("2027-03-26T08:00:00Z")))
  )

/**
 * Runs a request with key `header` through the step until it is answered: its first attempt
 * fails with a lost connection `where` said (after its write committed, as a lost COMMIT
 * answer does; or inside it, which rolls it back), then the retry runs. `write` is the
 * request's write transaction, its result the 201 answer. Returns what each attempt's
 * transaction gave and the retry's response.
 */
const attemptTwice = <A, E, R>(
  header: string,
  path: string,
  write: (attempt: number) => Effect.Effect<A, E, R>,
  where: "after" | "inside"
) =>
  Effect.gen(function*() {
    const storage = yield* Storage
    const idempotent = makeIdempotent(yield* Idempotency)
    const lost = new StorageFailure({ detail: "the connection broke", unavailable: true })
    const results: Array<A> = []
    let attempts = 0
    const run = Effect.gen(function*() {
      const attempt = ++attempts
      const made = yield* storage.transaction(
        Effect.tap(write(attempt), () => attempt === 1 && where === "inside" ? Effect.fail(lost) : Effect.void)
      )
      results.push(made)
      if (attempt === 1) return yield* Effect.fail(lost)
      return HttpServerResponse.unsafeJson(made, { status: 201 })
    })
    const request = { header, method: "POST", path, body: {}, principal }
    expect((yield* Effect.either(idempotent(request, run)))._tag).toBe("Left")
    const retried = yield* idempotent(request, run)
    return { results, retried, json: jsonOf(retried), repeat: idempotent(request, run) }
  })

/** `write` with its answer lost after it committed; the retry's status and body, checked to replay after. */
const lostThenRetried = <A, E, R>(path: string, write: Effect.Effect<A, E, R>) =>
  Effect.gen(function*() {
    const { json, repeat, results, retried } = yield* attemptTwice(`lost ${path}`, path, () => write, "after")
    expect(results).toHaveLength(2)
    expect((yield* repeat).headers["idempotent-replayed"]).toBe("true")
    return { status: retried.status, json }
  })

describe.each(storages)("a write committed whose answer was lost, on %s", (_name, storage) => {
  it.live("creating a client: the retry is given the client made, and there is one", () =>
    Effect.gen(function*() {
      const clients = yield* Clients
      const retried = yield* lostThenRetried("/v1/clients", clients.create({ name: "Lost" }))
      expect(retried.status).toBe(201)
      const stored = yield* (yield* Storage).collection(ClientsCollection).list({})
      expect(stored.map((c) => c.id)).toEqual([retried.json.id])
      expect(stored[0]!.name).toBe("Lost")
    }).pipe(as(tenant), Effect.provide(setup(storage))))

  it.live("booking: the retry is given the booking made, not slot_unavailable naming it", () =>
    Effect.gen(function*() {
      const member = yield* Effect.flatMap(Staff, (s) => s.create({ name: "Ana", time_zone: "UTC" }))
      yield* Effect.flatMap(Availability, (a) =>
        a.create({ staff_id: member.id, type: "weekly", weekdays: [1, 2, 3, 4, 5], start_time: "09:00", end_time: "17:00" }))
      const service = yield* Effect.flatMap(Services, (s) =>
        s.create({ name: "Cut", duration_minutes: 30, staff_ids: [member.id] }))
      const client = yield* Effect.flatMap(Clients, (c) => c.create({ name: "Bo" }))
      const body = { service_id: service.id, staff_id: member.id, client_id: client.id, start: "2027-03-29T09:00:00Z" }
      const retried = yield* lostThenRetried("/v1/bookings", Effect.flatMap(Bookings, (b) => b.create(body)))
      expect(retried.status).toBe(201)
      expect(retried.json).toMatchObject({ object: "booking", client_id: client.id, start: "2027-03-29T09:00:00Z" })
      const stored = yield* (yield* Storage).collection(BookingsCollection).list({})
      expect(stored.map((b) => b.id)).toEqual([retried.json.id])
    }).pipe(as(tenant), Effect.provide(setup(storage))))

  it.live("a write rolled back leaves the key free: the retry writes, once", () =>
    Effect.gen(function*() {
      const clients = yield* Clients
      const { retried } = yield* attemptTwice("rolled back", "/v1/clients", (n) => clients.create({ name: `Attempt ${n}` }), "inside")
      expect(retried.status).toBe(201)
      const stored = yield* (yield* Storage).collection(ClientsCollection).list({})
      expect(stored.map((c) => c.name)).toEqual(["Attempt 2"])
    }).pipe(as(tenant), Effect.provide(setup(storage))))

  it.live("a write that returned an Option: the retry is given the same Option", () =>
    Effect.gen(function*() {
      const clients = yield* Clients
      const optional = () => Effect.map(clients.create({ name: "Optional" }), (c) => Option.some(c.id))
      const { results } = yield* attemptTwice("option", "/v1/clients", optional, "after")
      expect(results[1]).toEqual(results[0])
      const stored = yield* (yield* Storage).collection(ClientsCollection).list({})
      expect(stored.map((c) => Option.some(c.id))).toEqual([results[0]])
    }).pipe(as(tenant), Effect.provide(setup(storage))))

  it.live("a write that made a secret: the retry is told so, and the secret is never kept", () =>
    Effect.gen(function*() {
      const storage = yield* Storage
      const clients = yield* Clients
      const withSecret = (n: number) =>
        Effect.map(
          clients.create({ name: `Keyed ${n}` }),
          (c) => ({ object: "api_key", id: c.id, secret: "sk_test_never_kept_0123456789" })
        )
      const { json, retried } = yield* attemptTwice("secret", "/v1/api-keys", withSecret, "after")
      expect(JSON.stringify(yield* storage.collection(IdempotencyCollection).list({}))).not.toContain("sk_test_never_kept")
      const stored = yield* storage.collection(ClientsCollection).list({})
      expect(stored.map((c) => c.name)).toEqual(["Keyed 1"])
      expect(retried.status).toBe(409)
      expect(json.code).toBe("idempotency_secret_withheld")
      expect(json.detail).toContain(`api_key ${stored[0]!.id}`)
    }).pipe(as(tenant), Effect.provide(setup(storage))))
})
