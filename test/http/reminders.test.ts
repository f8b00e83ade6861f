/**
 * Reminders over HTTP: the account's list on PATCH /v1/account (validated, shared by both
 * environments), a service's own list, and `booking.reminder` in each environment's feed on
 * the server's controlled clock.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { waitFor } from "../webhooks/receiver.js"
import { client, type Client, expectProblem, expectStatus, MONDAY_9, newAccount, seed, startServer, type TestServer } from "./harness.js"

let server: TestServer
beforeAll(async () => {
  server = await startServer()
})
afterAll(() => server.close())

const reminders = async (api: Client) => expectStatus(await api.get("/v1/events?types=booking.reminder&limit=100"), 200).data

const book = async (api: Client, serviceReminders?: ReadonlyArray<{ offset_minutes: number }> | null, start = MONDAY_9) => {
  const { client: c, service, staff } = await seed(api)
  if (serviceReminders !== undefined) expectStatus(await api.patch(`/v1/services/${service.id}`, { reminders: serviceReminders }), 200)
  return expectStatus(await api.post("/v1/bookings", { service_id: service.id, staff_id: staff.id, client_id: c.id, start }), 201)
}

/** Moves the server's clock to `minutes` relative to `from` (never backwards). */
const advanceTo = async (minutes: number, from = MONDAY_9) => {
  const target = Date.parse(from) + minutes * 60_000
  if (target > server.now()) await server.advance(target - server.now())
}

describe("reminders", () => {
  it("are set on the account for both environments and fire in each environment's feed", async () => {
    const created = await newAccount(server)
    const sandbox = client(server.url, created.keys.sandbox.secret)
    const production = client(server.url, created.keys.production.secret)
    expect(expectStatus(await sandbox.get("/v1/account"), 200).reminders).toEqual([])
    const before = await book(sandbox)
    const untouched = await book(sandbox)

    const updated = expectStatus(await sandbox.patch("/v1/account", { reminders: [{ offset_minutes: 120 }, { offset_minutes: 30 }] }), 200)
    expect(updated.reminders).toEqual([{ offset_minutes: 120 }, { offset_minutes: 30 }])
    expect(expectStatus(await production.get("/v1/account"), 200).reminders).toEqual(updated.reminders)

    // Bookings made after the change are armed; one made before keeps what it had (none).
    const rebooked = expectStatus(await sandbox.post(`/v1/bookings/${before.id}/reschedule`, { start: "2027-03-29T09:30:00Z" }), 200)
    const inProduction = await book(production)
    const ownList = await book(production, [{ offset_minutes: 45 }])
    await book(sandbox, [])

    await advanceTo(-120)
    await waitFor(async () => (await reminders(production)).length === 1, 20_000, "the first production reminder")
    await advanceTo(60)
    await waitFor(
      async () => (await reminders(production)).length === 3 && (await reminders(sandbox)).length === 2,
      20_000,
      "every reminder"
    )
    const sent = (api: Client) =>
      reminders(api).then((
        events: Array<{ created_at: string; data: { object: { id: string }; offset_minutes: number; late: boolean } }>
      ) => events.map((e) => [e.data.object.id, e.data.offset_minutes, e.created_at, e.data.late]))
    expect(await sent(production)).toEqual([
      [inProduction.id, 120, "2027-03-29T07:00:00Z", false],
      [ownList.id, 45, "2027-03-29T08:15:00Z", false],
      [inProduction.id, 30, "2027-03-29T08:30:00Z", false]
    ])
    // Neither `untouched` (booked before the change) nor `none` (its service's list is empty).
    expect(await sent(sandbox)).toEqual([
      [rebooked.id, 120, "2027-03-29T07:30:00Z", false],
      [rebooked.id, 30, "2027-03-29T09:00:00Z", false]
    ])
    expect(untouched.status).toBe("confirmed")
  }, 60_000)

  it("refuses invalid lists, naming each offending field", async () => {
    const api = client(server.url, (await newAccount(server)).keys.sandbox.secret)
    const paths = async (body: unknown) =>
      expectProblem(await api.patch("/v1/account", body as Record<string, unknown>), 422, "validation_failed").errors.map((
        e: { path: string }
      ) => e.path)
    expect(await paths({ reminders: [{ offset_minutes: 4 }, { offset_minutes: 43_201 }, { offset_minutes: 1.5 }] })).toEqual([
      "reminders.0.offset_minutes",
      "reminders.1.offset_minutes",
      "reminders.2.offset_minutes"
    ])
    expect(await paths({ reminders: [{ offset_minutes: 60 }, { offset_minutes: 60 }] })).toEqual(["reminders.1.offset_minutes"])
    expect(await paths({ reminders: [5, 6, 7, 8, 9, 10].map((offset_minutes) => ({ offset_minutes })) })).toEqual(["reminders"])
    expect(expectStatus(await api.get("/v1/account"), 200).reminders).toEqual([])
    const service = expectStatus(await api.post("/v1/services", { name: "Cut", duration_minutes: 30 }), 201)
    expect(service.reminders).toBeNull()
    const bad = expectProblem(
      await api.patch(`/v1/services/${service.id}`, { reminders: [{ offset_minutes: 43_200 }, { offset_minutes: 2 }] }),
      422,
      "validation_failed"
    )
    expect(bad.errors.map((e: { path: string }) => e.path)).toEqual(["reminders.1.offset_minutes"])
  })

  it(
    "booking.reminder is in the catalogue: OpenAPI, webhook selectors and the sandbox emitter with a sample or a real booking",
    async () => {
      const spec = expectStatus(await client(server.url).get("/v1/openapi.json"), 200)
      const text = JSON.stringify(spec)
      expect(text).toContain("booking.reminder")
      expect(Object.keys(spec.components.schemas.Event.properties.data.properties)).toEqual(
        expect.arrayContaining(["offset_minutes", "late"])
      )
      const api = client(server.url, (await newAccount(server)).keys.sandbox.secret)
      expectStatus(await api.post("/v1/webhooks", { url: "https://hooks.example.com/in", events: ["booking.reminder"] }), 201)
      const sample = expectStatus(await api.post("/v1/sandbox/events", { type: "booking.reminder" }), 201)
      expect(sample).toMatchObject({ type: "booking.reminder", data: { object: { object: "booking" }, offset_minutes: 60, late: false } })
      // The clock may have passed MONDAY_9 in an earlier test: a week later.
      const nextMonday = "2027-04-05T09:00:00Z"
      const booking = await book(api, undefined, nextMonday)
      const real = expectStatus(await api.post("/v1/sandbox/events", { type: "booking.reminder", object_id: booking.id }), 201)
      expect(real).toMatchObject({ data: { object: { id: booking.id }, offset_minutes: 60, late: false } })
      // A sandbox reset keeps the account's reminders for the sandbox's next bookings.
      expectStatus(await api.patch("/v1/account", { reminders: [{ offset_minutes: 10 }] }), 200)
      expectStatus(await api.post("/v1/sandbox/reset", {}), 204)
      const after = await book(api, undefined, nextMonday)
      await advanceTo(-10, nextMonday)
      await waitFor(async () => (await reminders(api)).length === 1, 20_000, "the reminder after a reset")
      expect((await reminders(api))[0].data).toMatchObject({ object: { id: after.id }, offset_minutes: 10 })
    },
    60_000
  )
})
