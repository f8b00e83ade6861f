/** Error messages read as a person would write them, and say what a valid request looks like. */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { client, type Client, expectProblem, MONDAY_9, seed, startServer, type TestServer } from "./harness.js"

let server: TestServer
let api: Client
let ids: Awaited<ReturnType<typeof seed>>

beforeAll(async () => {
  server = await startServer()
  api = client(server.url, server.first.keys.sandbox.secret)
  ids = await seed(api)
})
afterAll(() => server.close())

describe("error wording", () => {
  it("an id of the right prefix but the wrong form says what a valid id looks like", async () => {
    const problem = expectProblem(
      await api.post("/v1/bookings", { service_id: "svc_nope", client_id: ids.client.id, start: MONDAY_9 }),
      422,
      "validation_failed"
    )
    expect(problem.errors).toEqual([{
      path: "service_id",
      message: "must be a service id: svc_ followed by 26 letters and digits, such as svc_01JQ4Z8X9V3K7M2N5P6R8T0W1Y"
    }])
    const query = expectProblem(await api.get("/v1/availability?staff_id=stf_1"), 400, "bad_request")
    expect(query.errors).toEqual([{ path: "staff_id", message: expect.stringMatching(/^must be a staff member id: stf_ followed by 26/) }])
    const key = expectProblem(await api.get("/v1/bookings?client_id=x"), 400, "bad_request")
    expect(key.errors[0].message).toMatch(/^must be a client id: cli_/)
  })

  it("a well-formed id that names nothing says so in words", async () => {
    const problem = expectProblem(
      await api.post("/v1/bookings", {
        service_id: ids.service.id,
        staff_id: "stf_01JQ4Z8X9V3K7M2N5P6R8T0W1Y",
        client_id: ids.client.id,
        start: MONDAY_9
      }),
      422,
      "invalid_reference"
    )
    expect(problem.errors).toEqual([{ path: "staff_id", message: "does not name an existing staff member" }])
  })

  it("an inline client beside client_id reads as a sentence", async () => {
    const problem = expectProblem(
      await api.post("/v1/bookings", {
        service_id: ids.service.id,
        staff_id: ids.staff.id,
        client_id: ids.client.id,
        client: { name: "Zoe" },
        start: MONDAY_9
      }),
      422,
      "validation_failed"
    )
    expect(problem.detail).toBe("client cannot be given with client_id: send one or the other")
  })

  it("a start in the past is called the past, not a notice of 0 minutes", async () => {
    const problem = expectProblem(
      await api.post("/v1/bookings", {
        service_id: ids.service.id,
        staff_id: ids.staff.id,
        client_id: ids.client.id,
        start: "2027-03-25T09:00:00Z"
      }),
      409,
      "outside_availability"
    )
    expect(problem.detail).toBe("2027-03-25 09:00 (UTC) is in the past: the earliest start now is 2027-03-26 08:00 (UTC).")
    expect(problem.detail).not.toContain("0 minutes")
  })

  it("a publishable key without Origin is told that the Origin header is missing", async () => {
    const problem = expectProblem(await client(server.url, server.first.keys.sandbox.publishable).get("/v1/services"), 403, "forbidden")
    expect(problem.detail).toBe("publishable keys work only from the account's allowed origins, and this request has no Origin header")
    const foreign = expectProblem(
      await client(server.url, server.first.keys.sandbox.publishable).get("/v1/services", { headers: { origin: "https://evil.example" } }),
      403,
      "forbidden"
    )
    expect(foreign.detail).toBe(
      "publishable keys work only from the account's allowed origins, and https://evil.example is not one of them: allow it with " +
        `\`slotwise accounts update ${server.first.account.id} --allowed-origin https://evil.example\` (the flag replaces the list: ` +
        `repeat it for every origin to keep), or with a secret key, PATCH /v1/account {"allowed_origins": [..., "https://evil.example"]}`
    )
  })

  it("a preflight without Origin says it needs one", async () => {
    const reply = await api.send("OPTIONS", "/v1/services", { key: undefined, headers: { "access-control-request-method": "GET" } })
    expect(expectProblem(reply, 403, "forbidden").detail).toBe("a preflight request needs an Origin header")
  })
})
