/**
 * The round-robin pick and the collective check are atomic with the write across processes
 * (docs/api.md §11): two `slotwise serve` processes on one SQLite file, and two on one
 * PostgreSQL database, each take 50 concurrent requests for one start.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { binary, client, type Client, expectProblem, expectStatus, killServers, MONDAY_9, serveProcess } from "../http/harness.js"
import { createTestDatabase, type TestDatabase } from "../postgres/database.js"

const ADMIN = "assignment-admin-token-0123456789"
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "slotwise-assignment-"))
let db: TestDatabase | undefined

beforeAll(() => binary().then(() => undefined), 120_000)
afterAll(async () => {
  killServers()
  await db?.drop()
  fs.rmSync(dir, { recursive: true, force: true })
})

/** Five members free Monday to Friday 09–17 UTC, a round-robin and a collective service over them. */
const team = async (api: Client) => {
  const staffIds: Array<string> = []
  for (let i = 0; i < 5; i++) {
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
    staffIds.push(staff.id)
  }
  const service = (assignment: string) =>
    api.post("/v1/services", { name: assignment, duration_minutes: 30, staff_ids: staffIds, assignment })
  const roundRobin = expectStatus(await service("round_robin"), 201)
  const collective = expectStatus(await service("collective"), 201)
  const clientId = expectStatus(await api.post("/v1/clients", { name: "Bo", email: "bo@example.com" }), 201).id
  return { staffIds, roundRobin, collective, clientId }
}

/** 50 concurrent creates, alternating between the two servers; the created bookings. */
const race = async (urls: readonly [string, string], key: string, body: Record<string, unknown>) => {
  const replies = await Promise.all(Array.from({ length: 50 }, (_, i) => client(urls[i % 2]!, key).post("/v1/bookings", body)))
  for (const r of replies.filter((r) => r.status !== 201)) expectProblem(r, 409, "slot_unavailable")
  return replies.filter((r) => r.status === 201).map((r) => r.json as { staff_id: string; staff_ids: Array<string>; assigned_by: string })
}

const proves = async (urls: readonly [string, string], key: string) => {
  const t = await team(client(urls[0], key))
  const picked = await race(urls, key, { service_id: t.roundRobin.id, client_id: t.clientId, start: MONDAY_9 })
  expect(picked).toHaveLength(5)
  expect(new Set(picked.map((b) => b.staff_id))).toEqual(new Set(t.staffIds))
  expect(picked.every((b) => b.assigned_by === "round_robin")).toBe(true)

  const later = "2027-03-29T11:00:00Z"
  const together = await race(urls, key, { service_id: t.collective.id, client_id: t.clientId, start: later })
  expect(together).toHaveLength(1)
  expect(together[0]).toMatchObject({ staff_ids: t.staffIds, assigned_by: "collective" })
  // Nobody is left at either start, as both servers see it.
  for (const url of urls) {
    const api = client(url, key)
    for (const [service, start] of [[t.roundRobin.id, MONDAY_9], [t.collective.id, later]] as const) {
      const slots = expectStatus(await api.get(`/v1/availability/slots?service_id=${service}&start=${start}&end=2027-03-29T12:00:00Z`), 200)
      expect(slots.data.map((s: { start: string }) => s.start)).not.toContain(start)
    }
  }
}

describe("assignment across processes", { timeout: 120_000 }, () => {
  it("two processes on one SQLite file: 50 round-robin requests give 5 bookings on 5 people; 50 collective give 1", async () => {
    const file = path.join(dir, "team.db")
    const env = { SLOTWISE_ADMIN_TOKEN: ADMIN }
    const one = await serveProcess(["--database", file], env)
    const two = await serveProcess(["--database", file], env)
    const acct = expectStatus(await client(one.url, ADMIN).post("/admin/v1/accounts", { name: "Team", plan: "business" }), 201)
    await proves([one.url, two.url], acct.keys.sandbox.secret)
  })

  it("two instances on one PostgreSQL database: the same", async () => {
    db = await createTestDatabase()
    const env = { SLOTWISE_ADMIN_TOKEN: ADMIN, SLOTWISE_DATABASE_URL: "", SLOTWISE_REDIS_URL: "" }
    const [one, two] = await Promise.all([serveProcess(["--database", db.url], env), serveProcess(["--database", db.url], env)])
    const acct = expectStatus(await client(one!.url, ADMIN).post("/admin/v1/accounts", { name: "Team", plan: "business" }), 201)
    await proves([one!.url, two!.url], acct.keys.sandbox.secret)
  })
})
