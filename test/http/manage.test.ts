/**
 * Manage links over HTTP: manage_url on the account's reads only, the token endpoints with
 * no credential, one 404 for every bad token, rotation, the limits, and the deployment
 * secret never leaving the server.
 */
import Database from "better-sqlite3"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { client, type Client, expectProblem, expectStatus, MONDAY_9, newAccount, seed, startServer, type TestServer } from "./harness.js"

const ORIGIN = "https://shop.example.com"
let server: TestServer
let api: Client
let anonymous: Client
let setup: Awaited<ReturnType<typeof seed>>
/** Everything the server said, to search for the secret afterwards. */
const seen: Array<string> = []

const at = (minutes: number) => new Date(Date.parse(MONDAY_9) + minutes * 60_000).toISOString().replace(".000Z", "Z")
/** Each test counts from a fresh client address window: the per-address limit is 30 a minute. */
const freshWindow = () => server.advance(61_000)

const book = async (minutes: number) =>
  expectStatus(
    await api.post("/v1/bookings", {
      service_id: setup.service.id,
      staff_id: setup.staff.id,
      client_id: setup.client.id,
      start: at(minutes)
    }),
    201
  )
const tokenOf = (booking: { manage_url: string }) => booking.manage_url.split("/manage/")[1]!
const record = <R extends { text: string }>(reply: R): R => {
  seen.push(reply.text)
  return reply
}

const dir = mkdtempSync(join(tmpdir(), "slotwise-manage-"))
const database = join(dir, "slotwise.db")

beforeAll(async () => {
  // On a SQLite file, so the test can read the deployment secret the server created.
  server = await startServer({ storage: { sqlite: database } })
  api = client(server.url, server.first.keys.sandbox.secret)
  anonymous = client(server.url)
  setup = await seed(api)
})
afterAll(async () => {
  await server.close()
  rmSync(dir, { recursive: true, force: true })
})

describe("manage_url on booking reads", () => {
  it("secret-key reads carry it under the server's address; every read path agrees", async () => {
    const booking = record(
      await api.post("/v1/bookings", {
        service_id: setup.service.id,
        staff_id: setup.staff.id,
        client_id: setup.client.id,
        start: at(0)
      })
    ).json
    expect(booking.manage_url).toMatch(new RegExp(`^${server.url}/manage/[0-9A-Z]{26}\\.[0-9A-Z]{26}\\.t[A-Za-z0-9_-]{32}$`))
    expect(booking.manage_version).toBe(1)
    // The direct read lane, the list and an action give the same link.
    expect(expectStatus(record(await api.get(`/v1/bookings/${booking.id}`)), 200).manage_url).toBe(booking.manage_url)
    const listed = expectStatus(record(await api.get("/v1/bookings")), 200).data.find((b: any) => b.id === booking.id)
    expect(listed.manage_url).toBe(booking.manage_url)
    const cancelled = expectStatus(record(await api.post(`/v1/bookings/${booking.id}/cancel`, {})), 200)
    expect(cancelled.manage_url).toBe(booking.manage_url)
  })

  it("a publishable key never sees it, not even for the booking it creates", async () => {
    const account = await newAccount(server, { allowed_origins: [ORIGIN] })
    const owner = client(server.url, account.keys.sandbox.secret)
    const theirs = await seed(owner)
    const widget = client(server.url, account.keys.sandbox.publishable)
    const created = expectStatus(
      await widget.post("/v1/bookings", {
        service_id: theirs.service.id,
        staff_id: theirs.staff.id,
        client: { name: "Cy" },
        start: MONDAY_9
      }, { headers: { origin: ORIGIN } }),
      201
    )
    expect(created).not.toHaveProperty("manage_url")
    expect(JSON.stringify(created)).not.toContain("/manage/")
    expect(expectStatus(await owner.get(`/v1/bookings/${created.id}`), 200).manage_url).toContain("/manage/")
  })
})

describe("the client's endpoints", () => {
  it("open the booking with no credential, list slots, move and cancel it, recording the client as the actor", async () => {
    await freshWindow()
    const booking = await book(60)
    const token = tokenOf(booking)
    const view = expectStatus(record(await anonymous.get(`/v1/manage/${token}`)), 200)
    expect(view).toMatchObject({
      object: "managed_booking",
      id: booking.id,
      can_cancel: true,
      staff: { name: "Ana" },
      client: { name: "Bob" }
    })
    expect(view).not.toHaveProperty("manage_url")
    // No CORS: the hosted page calls these from the server's own origin.
    const fromElsewhere = await anonymous.get(`/v1/manage/${token}`, { headers: { origin: ORIGIN } })
    expect(fromElsewhere.headers.get("access-control-allow-origin")).toBeNull()

    const slots = expectStatus(await anonymous.get(`/v1/manage/${token}/slots?start=${at(60)}&end=${at(180)}`), 200)
    expect(slots.data.map((s: any) => s.start)).toEqual([at(90), at(120), at(150)])
    expectProblem(await anonymous.get(`/v1/manage/${token}/slots?start=${at(60)}`), 400, "bad_request")
    const tooLong = expectProblem(
      await anonymous.get(`/v1/manage/${token}/slots?start=${at(60)}&end=${at(63 * 24 * 60)}`),
      400,
      "bad_request"
    )
    expect(tooLong.errors).toEqual([{ path: "end", message: "must be at most 62 days after start" }])

    const moved = expectStatus(record(await anonymous.post(`/v1/manage/${token}/reschedule`, { start: at(120) })), 200)
    expect(moved).toMatchObject({ start: at(120), status: "confirmed" })
    expectProblem(
      await anonymous.post(`/v1/manage/${token}/reschedule`, { start: at(120), staff_id: setup.staff.id }),
      422,
      "validation_failed"
    )
    const cancelled = expectStatus(record(await anonymous.post(`/v1/manage/${token}/cancel`, { reason: "moving away" })), 200)
    expect(cancelled).toMatchObject({ status: "cancelled", cancellation_reason: "moving away", can_cancel: false })
    expectProblem(await anonymous.post(`/v1/manage/${token}/cancel`, {}), 409, "invalid_transition")

    const events = expectStatus(await api.get(`/v1/events?types=booking.rescheduled,booking.cancelled`), 200).data
      .filter((e: any) => e.data.object.id === booking.id)
    expect(events.map((e: any) => [e.type, e.data.actor])).toEqual([["booking.rescheduled", "client"], ["booking.cancelled", "client"]])
  })

  it("answer every token that opens no booking with the same 404 body, never a 500", async () => {
    await freshWindow()
    const booking = await book(240)
    const token = tokenOf(booking)
    const other = await book(300)
    const account = await newAccount(server)
    const foreign = await seed(client(server.url, account.keys.sandbox.secret))
    const foreignBooking = expectStatus(
      await client(server.url, account.keys.sandbox.secret).post("/v1/bookings", {
        service_id: foreign.service.id,
        staff_id: foreign.staff.id,
        client_id: foreign.client.id,
        start: MONDAY_9
      }),
      201
    )
    const bad = [
      other.id.slice(4) + token.slice(26), // this MAC on another booking
      token.slice(0, 27) + foreignBooking.client_id.slice(4) + token.slice(53), // another account
      foreignBooking.id.slice(4) + token.slice(26), // another account's booking
      token.slice(0, -1) + (token.endsWith("A") ? "B" : "A"),
      token.slice(0, 54) + "l" + token.slice(55), // production
      "%00".repeat(87),
      "a".repeat(150),
      "a".repeat(2000),
      "..%2F..%2Fv1%2Fbookings",
      "null"
    ]
    const bodies = new Set<string>()
    for (const path of bad.map((t) => `/v1/manage/${t}`)) {
      const reply = await anonymous.get(path)
      expectProblem(reply, 404, "not_found")
      bodies.add(reply.text)
    }
    expect([...bodies]).toEqual([JSON.stringify({
      type: "https://slotwise.dev/errors/not_found",
      title: "Not found",
      status: 404,
      code: "not_found",
      detail: "no booking for this manage link"
    })])
    expectProblem(await anonymous.post(`/v1/manage/${bad[0]}/cancel`, {}), 404, "not_found")
    expect(expectStatus(await api.get(`/v1/bookings/${other.id}`), 200).status).toBe("confirmed")
  })

  it("rotation kills the old link at once and returns the booking with the new one", async () => {
    await freshWindow()
    const booking = await book(330)
    const rotated = expectStatus(record(await api.post(`/v1/bookings/${booking.id}/manage-link/rotate`)), 200)
    expect(rotated.manage_version).toBe(2)
    expect(rotated.manage_url).not.toBe(booking.manage_url)
    expectProblem(await anonymous.get(`/v1/manage/${tokenOf(booking)}`), 404, "not_found")
    expectStatus(await anonymous.get(`/v1/manage/${tokenOf(rotated)}`), 200)
    expectProblem(await api.post(`/v1/bookings/bkg_${"0".repeat(26)}/manage-link/rotate`), 404, "not_found")
    // A key without bookings:write may not rotate.
    const reader = (await api.post("/v1/api-keys", { name: "reader", type: "secret", scopes: ["bookings:read"] })).json.secret
    expectProblem(await client(server.url, reader).post(`/v1/bookings/${booking.id}/manage-link/rotate`), 403, "forbidden")
  })

  it("refuse a client's change within the cancellation notice with notice_period_passed", async () => {
    await freshWindow()
    expectStatus(await api.patch(`/v1/services/${setup.service.id}`, { cancellation_notice_minutes: 60 * 24 * 30 }), 200)
    try {
      const booking = await book(360)
      const token = tokenOf(booking)
      const view = expectStatus(await anonymous.get(`/v1/manage/${token}`), 200)
      expect(view).toMatchObject({ can_cancel: false, cancel_refusal: { code: "notice_period_passed" } })
      expectProblem(await anonymous.post(`/v1/manage/${token}/cancel`, {}), 409, "notice_period_passed")
      expectProblem(await anonymous.post(`/v1/manage/${token}/reschedule`, { start: at(390) }), 409, "notice_period_passed")
    } finally {
      expectStatus(await api.patch(`/v1/services/${setup.service.id}`, { cancellation_notice_minutes: 0 }), 200)
    }
  })

  it("limit a booking's client writes to 10 an hour, with Retry-After", async () => {
    await freshWindow()
    const booking = await book(420)
    const token = tokenOf(booking)
    for (let i = 0; i < 10; i++) {
      expectStatus(await anonymous.post(`/v1/manage/${token}/reschedule`, { start: at(i % 2 === 0 ? 450 : 420) }), 200)
    }
    const refused = await anonymous.post(`/v1/manage/${token}/reschedule`, { start: at(450) })
    expectProblem(refused, 429, "rate_limited")
    const retryAfter = Number(refused.headers.get("retry-after"))
    expect(retryAfter).toBeGreaterThan(3000)
    expect(retryAfter).toBeLessThanOrEqual(3600)
    // Reads go on; another booking's writes too.
    expectStatus(await anonymous.get(`/v1/manage/${token}`), 200)
    expectStatus(await anonymous.post(`/v1/manage/${tokenOf(await book(390))}/cancel`, {}), 200)
  })

  it("move only to starts on the service's grid, and a taken time names no other booking", async () => {
    await freshWindow()
    // The Monday after: 30-minute starts from 09:00.
    const week = 7 * 24 * 60
    const mine = await book(week)
    const other = await book(week + 60)
    const token = tokenOf(mine)
    const offGrid = expectProblem(
      await anonymous.post(`/v1/manage/${token}/reschedule`, { start: at(week + 67) }),
      422,
      "validation_failed"
    )
    expect(offGrid.errors).toEqual([expect.objectContaining({ path: "start" })])
    expect(offGrid.detail).toContain(at(week + 60))
    const taken = await anonymous.post(`/v1/manage/${token}/reschedule`, { start: at(week + 60) })
    const problem = expectProblem(taken, 409, "slot_unavailable")
    expect(taken.text).not.toContain(other.id)
    expect(taken.text).not.toMatch(/booking_id|bkg_/)
    expect(problem.detail).not.toMatch(/\d\d:\d\d/)
    expect(problem.reasons.map((r: { code: string }) => r.code)).toEqual(["booking_overlap"])
    expectStatus(await anonymous.post(`/v1/manage/${token}/reschedule`, { start: at(week + 90) }), 200)
    // The account's own key still sees what is in the way.
    const full = expectProblem(await api.post(`/v1/bookings/${mine.id}/reschedule`, { start: at(week + 60) }), 409, "slot_unavailable")
    expect(full.reasons).toEqual([expect.objectContaining({ booking_id: other.id })])
  })

  it("limit a client address to 30 requests a minute, valid token or not", async () => {
    await freshWindow()
    let last = await anonymous.get(`/v1/manage/${"x".repeat(87)}`)
    for (let i = 1; i < 30; i++) last = await anonymous.get(`/v1/manage/${"x".repeat(87)}`)
    expectProblem(last, 404, "not_found")
    const refused = await anonymous.get(`/v1/manage/${"x".repeat(87)}`)
    expectProblem(refused, 429, "rate_limited")
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0)
  })
})

describe("the deployment secret", () => {
  it("is stored once and appears in no response or event", async () => {
    const db = new Database(database, { readonly: true })
    const rows = db.prepare("SELECT account_id, doc FROM c_deployment_secrets").all() as Array<{ account_id: string; doc: string }>
    db.close()
    expect(rows).toHaveLength(1)
    expect(rows[0]!.account_id).toBe("_system")
    const secret: string = JSON.parse(rows[0]!.doc).secret
    expect(secret).toMatch(/^[A-Za-z0-9_-]{43}$/)
    const standard = Buffer.from(secret, "base64url").toString("base64")
    const everything = [...seen, (await api.get("/v1/events?limit=100")).text].join("\n")
    expect(everything).toContain("/manage/")
    expect(everything).not.toContain(secret)
    expect(everything).not.toContain(standard.slice(0, 40))
  })
})
