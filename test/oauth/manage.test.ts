/** An OAuth token acts for the account: its booking reads carry the manage link, as a secret key's do. */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { client, expectStatus, MONDAY_9, seed } from "../http/harness.js"
import { obtainTokens, registerClient } from "./agent.js"
import { type OAuthTestServer, startOAuthServer } from "./harness.js"

let server: OAuthTestServer
beforeAll(async () => {
  server = await startOAuthServer()
}, 60_000)
afterAll(() => server.close())

describe("manage links with an OAuth token", () => {
  it("a token's booking reads and rotations carry manage_url", async () => {
    const setup = await seed(server.sandbox)
    const booking = expectStatus(
      await server.sandbox.post("/v1/bookings", {
        service_id: setup.service.id,
        staff_id: setup.staff.id,
        client_id: setup.client.id,
        start: MONDAY_9
      }),
      201
    )
    const { tokens } = await obtainTokens(server, await registerClient(server), { scope: "bookings:read bookings:write" })
    const integration = client(server.url, tokens.access_token)
    const read = expectStatus(await integration.get(`/v1/bookings/${booking.id}`), 200)
    expect(read.manage_url).toBe(booking.manage_url)
    expect(read.manage_url).toMatch(/^http:\/\/127\.0\.0\.1:8080\/manage\//)
    const listed = expectStatus(await integration.get("/v1/bookings"), 200).data.find((b: any) => b.id === booking.id)
    expect(listed.manage_url).toBe(booking.manage_url)
    const rotated = expectStatus(await integration.post(`/v1/bookings/${booking.id}/manage-link/rotate`), 200)
    expect(rotated.manage_url).not.toBe(booking.manage_url)
    expectStatus(await client(server.url).get(`/v1/manage/${rotated.manage_url.split("/manage/")[1]}`), 200)
  })
})
