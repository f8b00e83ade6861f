/**
 * A client generated from the served document works without hand fixes: `openapi-typescript`
 * writes the types, a small `openapi-fetch` client (no casts) type-checks against them with
 * `tsc --strict`, then books a slot on a running server over HTTP, Idempotency-Key included.
 * The generated files live in a temporary folder under `.vitest-tmp/` (ignored by git) so
 * that `openapi-fetch` resolves from the project's node_modules.
 */
import { execFile } from "node:child_process"
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises"
import { join } from "node:path"
import { pathToFileURL } from "node:url"
import { promisify } from "node:util"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { client, expectStatus, MONDAY_9, startServer, type TestServer } from "./harness.js"

const run = promisify(execFile)
const ROOT = join(import.meta.dirname, "../..")
const bin = (name: string) => join(ROOT, "node_modules/.bin", name)

/** The client a user would write: typed paths, bodies, parameters and responses; no casts. */
const CLIENT = `import createClient from "openapi-fetch"
import type { paths } from "./schema.js"

export interface Booked {
  readonly status: number
  readonly replayed: string | null
  readonly id: string
  readonly start: string
  readonly bookingStatus: "pending" | "confirmed" | "cancelled" | "completed" | "no_show"
}

const must = <T>(value: T | undefined, what: string): T => {
  if (value === undefined) throw new Error(what + " failed")
  return value
}

export const setUp = async (baseUrl: string, key: string) => {
  const api = createClient<paths>({ baseUrl, headers: { Authorization: "Bearer " + key } })
  const staff = must((await api.POST("/v1/staff", { body: { name: "Ana", time_zone: "UTC" } })).data, "staff")
  const service = must((await api.POST("/v1/services", {
    body: { name: "Cut", duration_minutes: 30, staff_ids: [staff.id], price: { amount: 2500, currency: "EUR" } }
  })).data, "service")
  must((await api.POST("/v1/availability", {
    body: { staff_id: staff.id, type: "weekly", weekdays: [1, 2, 3, 4, 5], start_time: "09:00", end_time: "17:00" }
  })).data, "availability")
  const client = must((await api.POST("/v1/clients", { body: { name: "Bob", email: "bob@example.com" } })).data, "client")
  return { api, serviceId: service.id, clientId: client.id }
}

export const bookFirstSlot = async (
  baseUrl: string,
  key: string,
  range: { readonly start: string; readonly end: string },
  idempotencyKey: string
): Promise<Booked> => {
  const { api, serviceId, clientId } = await setUp(baseUrl, key)
  const slots = must((await api.GET("/v1/availability/slots", {
    params: { query: { service_id: serviceId, start: range.start, end: range.end } }
  })).data, "slots")
  const slot = slots.data[0]
  if (slot === undefined) throw new Error("no free slot")
  const book = () =>
    api.POST("/v1/bookings", {
      params: { header: { "Idempotency-Key": idempotencyKey } },
      body: { service_id: serviceId, client_id: clientId, staff_id: slot.staff_id, start: slot.start, metadata: { source: "generated" } }
    })
  const first = must((await book()).data, "booking")
  // The same POST books a series when sent a recurrence: narrow to the single booking.
  if (first.object !== "booking") throw new Error("expected one booking")
  const again = await book()
  const replayed = must(again.data, "replay")
  if (replayed.id !== first.id) throw new Error("the replay booked again")
  const confirmed = await api.POST("/v1/bookings/{id}/confirm", { params: { path: { id: first.id } } })
  const status = confirmed.data?.status ?? first.status
  return {
    status: again.response.status,
    replayed: again.response.headers.get("Idempotent-Replayed"),
    id: first.id,
    start: first.start,
    bookingStatus: status
  }
}
`

let server: TestServer
let dir: string

beforeAll(async () => {
  server = await startServer()
  const spec = expectStatus(await client(server.url).get("/v1/openapi.json"), 200)
  await mkdir(join(ROOT, ".vitest-tmp"), { recursive: true })
  dir = await mkdtemp(join(ROOT, ".vitest-tmp", "generated-client-"))
  await writeFile(join(dir, "openapi.json"), JSON.stringify(spec))
  await writeFile(join(dir, "client.ts"), CLIENT)
  await run(bin("openapi-typescript"), [join(dir, "openapi.json"), "--output", join(dir, "schema.d.ts")], { cwd: ROOT })
}, 120_000)

afterAll(async () => {
  await server?.close()
  if (dir !== undefined) await rm(dir, { recursive: true, force: true })
})

describe("a client generated from the document", () => {
  it("type-checks with tsc --strict, without casts", async () => {
    const result = await run(bin("tsc"), [
      "--noEmit",
      "--strict",
      "--exactOptionalPropertyTypes",
      "--target", "es2022",
      "--lib", "es2022,dom",
      "--module", "esnext",
      "--moduleResolution", "bundler",
      "--skipLibCheck",
      "--types", "node",
      join(dir, "client.ts")
    ], { cwd: ROOT }).catch((e: { stdout: string; stderr: string }) => ({ stdout: `${e.stdout}${e.stderr}`, failed: true }))
    expect(result.stdout).toBe("")
    expect(CLIENT).not.toMatch(/\bas\b|<any>|: any\b/)
  }, 120_000)

  it("books a slot over HTTP; the repeat with the same Idempotency-Key is a replay", async () => {
    const { bookFirstSlot } = await import(pathToFileURL(join(dir, "client.ts")).href)
    const booked = await bookFirstSlot(server.url, server.first.keys.sandbox.secret, {
      start: "2027-03-29T00:00:00Z",
      end: "2027-03-30T00:00:00Z"
    }, "generated-client-1")
    expect(booked).toMatchObject({ status: 201, replayed: "true", start: MONDAY_9, bookingStatus: "confirmed" })
    expect(booked.id).toMatch(/^bkg_/)
  })
})
