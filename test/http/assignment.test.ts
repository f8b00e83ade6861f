/** Round-robin and collective services over HTTP (docs/api.md §11): fields, slots, explain, holds, problems. */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { client, type Client, expectProblem, expectStatus, MONDAY_9, startServer, type TestServer } from "./harness.js"

let server: TestServer
let api: Client

beforeAll(async () => {
  server = await startServer()
  api = client(server.url, server.first.keys.sandbox.secret)
})
afterAll(() => server.close())

const members = async (count: number) => {
  const ids: Array<string> = []
  for (let i = 0; i < count; i++) {
    const staff = expectStatus(await api.post("/v1/staff", { name: `Member ${i}`, time_zone: "UTC" }), 201)
    expectStatus(
      await api.post("/v1/availability", {
        staff_id: staff.id,
        type: "weekly",
        weekdays: [1, 2, 3, 4, 5],
        start_time: "09:00",
        end_time: "17:00"
      }),
      201
    )
    ids.push(staff.id)
  }
  return ids
}

describe("assignment over HTTP", () => {
  it("a round-robin service: slots with staff_ids, explain without staff_id, a booking assigned by round robin", async () => {
    const staffIds = await members(2)
    const service = expectStatus(
      await api.post("/v1/services", {
        name: "Intro call",
        duration_minutes: 30,
        staff_ids: staffIds,
        assignment: "round_robin",
        round_robin_policy: "weighted",
        staff_weights: { [staffIds[1]!]: 100 }
      }),
      201
    )
    expect(service).toMatchObject({ assignment: "round_robin", round_robin_policy: "weighted", staff_weights: { [staffIds[1]!]: 100 } })
    const slots = expectStatus(
      await api.get(`/v1/availability/slots?service_id=${service.id}&start=${MONDAY_9}&end=2027-03-29T10:00:00Z`),
      200
    )
    expect(slots.data).toHaveLength(2)
    expect(slots.data[0]).toMatchObject({ start: MONDAY_9, staff_id: staffIds[1], staff_ids: [staffIds[1], staffIds[0]], remaining: 2 })
    const explained = expectStatus(await api.get(`/v1/availability/explain?service_id=${service.id}&start=${MONDAY_9}`), 200)
    expect(explained).toMatchObject({ bookable: true, staff_id: staffIds[1], reasons: [] })
    const clientId = expectStatus(await api.post("/v1/clients", { name: "Bo" }), 201).id
    const booking = expectStatus(await api.post("/v1/bookings", { service_id: service.id, client_id: clientId, start: MONDAY_9 }), 201)
    expect(booking).toMatchObject({ staff_id: staffIds[1], staff_ids: [staffIds[1]], assigned_by: "round_robin" })
  })

  it("a collective hold takes every member; a weight for a stranger and an unknown policy are 422 naming the field", async () => {
    const staffIds = await members(2)
    const service = expectStatus(
      await api.post("/v1/services", {
        name: "Panel",
        duration_minutes: 30,
        staff_ids: staffIds,
        assignment: "collective"
      }),
      201
    )
    const hold = expectStatus(await api.post("/v1/availability/holds", { service_id: service.id, start: MONDAY_9 }), 201)
    expect(hold).toMatchObject({ staff_id: staffIds[0], staff_ids: staffIds, assigned_by: "collective" })
    const explained = expectStatus(await api.get(`/v1/availability/explain?service_id=${service.id}&start=${MONDAY_9}`), 200)
    expect(explained.bookable).toBe(false)
    expect(explained.reasons.map((r: { staff_id: string; code: string }) => [r.staff_id, r.code])).toEqual([
      [staffIds[0], "held"],
      [staffIds[1], "held"]
    ])

    const stranger = expectStatus(await api.post("/v1/staff", { name: "Stranger", time_zone: "UTC" }), 201)
    const weighted = expectProblem(
      await api.patch(`/v1/services/${service.id}`, { staff_weights: { [stranger.id]: 5 } }),
      422,
      "validation_failed"
    )
    expect(weighted.errors).toEqual([{ path: `staff_weights.${stranger.id}`, message: expect.any(String) }])
    const policy = expectProblem(await api.patch(`/v1/services/${service.id}`, { round_robin_policy: "random" }), 422)
    expect(policy.errors[0].path).toBe("round_robin_policy")
  })
})
