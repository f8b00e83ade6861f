/**
 * A client generated from the served document works without hand fixes: `openapi-typescript`
 * writes the types, a small `openapi-fetch` program (no casts) that follows the README's curl
 * walkthrough type-checks against them with `tsc --strict`, then runs it against a server on
 * 127.0.0.1: list bookings (`limit` a number, `status`), create staff, a service and its
 * hours, read the slots, book the first (Idempotency-Key included, no narrowing of the
 * answer), cancel it, book a series through POST /v1/booking-series and list the upcoming
 * bookings (`upcoming` a boolean). The generated files live in a temporary folder under
 * `.vitest-tmp/` (ignored by git) so that `openapi-fetch` resolves from the project's
 * node_modules.
 */
import { execFile } from "node:child_process"
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises"
import { join } from "node:path"
import { pathToFileURL } from "node:url"
import { promisify } from "node:util"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { client, expectStatus, startServer, type TestServer } from "./harness.js"

const run = promisify(execFile)
/** 09:00 in Berlin on the Mondays the walkthrough books (summer time). */
const MONDAYS_9_BERLIN = ["2027-03-29T07:00:00Z", "2027-04-05T07:00:00Z", "2027-04-12T07:00:00Z"]
const ROOT = join(import.meta.dirname, "../..")
const bin = (name: string) => join(ROOT, "node_modules/.bin", name)

/** The program a user would write: typed paths, bodies, parameters and responses; no casts. */
const PROGRAM = `import createClient from "openapi-fetch"
import type { paths } from "./schema.js"

/** The answer's body; a failure throws with the server's problem. */
const must = <T>(result: { readonly data?: T; readonly error?: unknown; readonly response: Response }, what: string): T => {
  if (result.data === undefined) throw new Error(what + ": " + result.response.status + " " + JSON.stringify(result.error))
  return result.data
}

export const walkthrough = async (baseUrl: string, key: string, range: { readonly start: string; readonly end: string }, idempotencyKey: string) => {
  const api = createClient<paths>({ baseUrl, headers: { Authorization: "Bearer " + key } })
  const before = must(await api.GET("/v1/bookings", { params: { query: { status: "confirmed", limit: 10 } } }), "list bookings")
  const staff = must(await api.POST("/v1/staff", { body: { name: "Ana", time_zone: "Europe/Berlin" } }), "create staff")
  const service = must(await api.POST("/v1/services", {
    body: { name: "Haircut", duration_minutes: 30, staff_ids: [staff.id], max_occurrences: 4 }
  }), "create service")
  const hours = must(await api.POST("/v1/availability", {
    body: { staff_id: staff.id, type: "weekly", weekdays: [1, 2, 3, 4, 5], start_time: "09:00", end_time: "17:00" }
  }), "create availability")
  const slots = must(await api.GET("/v1/availability/slots", {
    params: { query: { service_id: service.id, start: range.start, end: range.end } }
  }), "read slots")
  const slot = slots.data[0]
  if (slot === undefined) throw new Error("no free slot")
  const book = () =>
    api.POST("/v1/bookings", {
      params: { header: { "Idempotency-Key": idempotencyKey } },
      body: { service_id: service.id, staff_id: staff.id, start: slot.start, client: { name: "Bo", email: "bo@example.com" } }
    })
  // The documented answer is one booking: read without narrowing.
  const booking = must(await book(), "book")
  const replay = await book()
  const cancelled = must(await api.POST("/v1/bookings/{id}/cancel", {
    params: { path: { id: booking.id } },
    body: { reason: "changed plans" }
  }), "cancel")
  const series = must(await api.POST("/v1/booking-series", {
    body: {
      service_id: service.id,
      staff_id: staff.id,
      start: slot.start,
      client: { name: "Bo", email: "bo@example.com" },
      recurrence: { rule: "FREQ=WEEKLY;COUNT=3" }
    }
  }), "book a series")
  const upcoming = must(await api.GET("/v1/bookings", {
    params: { query: { upcoming: true, status: ["pending", "confirmed"], limit: 10 } }
  }), "list upcoming bookings")
  const seriesPage = must(await api.GET("/v1/booking-series", { params: { query: { limit: 1, service_id: service.id } } }), "list series")
  return {
    before: { object: before.object, has_more: before.has_more },
    hours: hours.type,
    booking: { id: booking.id, status: booking.status, start: booking.start },
    replay: { status: replay.response.status, replayed: replay.response.headers.get("Idempotent-Replayed"), id: replay.data?.id },
    cancelled: cancelled.status,
    series: { object: series.object, starts: series.occurrences.map((occurrence) => occurrence.start), skipped: series.skipped.length },
    upcoming: upcoming.data.map((b) => b.series_id),
    listedSeries: seriesPage.data.map((s) => s.id)
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
  await writeFile(join(dir, "walkthrough.ts"), PROGRAM)
  await run(bin("openapi-typescript"), [join(dir, "openapi.json"), "--output", join(dir, "schema.d.ts")], { cwd: ROOT })
}, 120_000)

afterAll(async () => {
  await server?.close()
  if (dir !== undefined) await rm(dir, { recursive: true, force: true })
})

describe("a client generated from the document", () => {
  it("type-checks the README's walkthrough with tsc --strict, without casts", async () => {
    const result = await run(bin("tsc"), [
      "--noEmit",
      "--strict",
      "--exactOptionalPropertyTypes",
      "--target",
      "es2022",
      "--lib",
      "es2022,dom",
      "--module",
      "esnext",
      "--moduleResolution",
      "bundler",
      "--skipLibCheck",
      "--types",
      "node",
      join(dir, "walkthrough.ts")
    ], { cwd: ROOT }).catch((e: { stdout: string; stderr: string }) => ({ stdout: `${e.stdout}${e.stderr}`, failed: true }))
    expect(result.stdout).toBe("")
    expect(PROGRAM).not.toMatch(/\bas\b|<any>|: any\b|@ts-/)
  }, 120_000)

  it("runs the walkthrough over HTTP: list, staff, service, hours, slots, book (replayed), cancel, series", async () => {
    const { walkthrough } = await import(pathToFileURL(join(dir, "walkthrough.ts")).href)
    const result = await walkthrough(server.url, server.first.keys.sandbox.secret, {
      start: "2027-03-29T00:00:00Z",
      end: "2027-03-30T00:00:00Z"
    }, "generated-client-1")
    expect(result).toMatchObject({
      before: { object: "list", has_more: false },
      hours: "weekly",
      booking: { status: "confirmed", start: MONDAYS_9_BERLIN[0] },
      replay: { status: 201, replayed: "true" },
      cancelled: "cancelled",
      series: { object: "booking_series", starts: MONDAYS_9_BERLIN, skipped: 0 }
    })
    expect(result.booking.id).toMatch(/^bkg_/)
    expect(result.replay.id).toBe(result.booking.id)
    expect(result.upcoming).toHaveLength(3)
    expect(new Set(result.upcoming)).toEqual(new Set([result.listedSeries[0]]))
  })
})
