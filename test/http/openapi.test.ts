/**
 * The served OpenAPI document passes the linters generators rely on, with their stock rule
 * sets (`redocly.yaml`, `.spectral.yaml`), and declares what the pipeline adds around the
 * handlers: the Idempotency-Key header, rate-limit and challenge headers, optional action
 * bodies. Each linter runs once, on the document a running server serves.
 */
import { execFile } from "node:child_process"
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { promisify } from "node:util"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { client, expectStatus, startServer } from "./harness.js"

const run = promisify(execFile)
const ROOT = join(import.meta.dirname, "../..")
const bin = (name: string) => join(ROOT, "node_modules/.bin", name)
// No telemetry, no update check: the linters run offline.
const env = { ...process.env, REDOCLY_TELEMETRY: "off", REDOCLY_SUPPRESS_UPDATE_NOTICE: "true", NO_COLOR: "1" }

let dir: string
let spec: any
let redocly: { totals: { errors: number; warnings: number }; problems: Array<unknown> }
let spectral: Array<{ code: string; message: string; path: Array<string>; severity: number }>

beforeAll(async () => {
  const server = await startServer()
  try {
    spec = expectStatus(await client(server.url).get("/v1/openapi.json"), 200)
  } finally {
    await server.close()
  }
  dir = await mkdtemp(join(tmpdir(), "slotwise-openapi-"))
  const file = join(dir, "openapi.json")
  await writeFile(file, JSON.stringify(spec))
  const [redoclyRun] = await Promise.all([
    // Exits non-zero when it finds problems: the JSON report is what counts.
    run(bin("redocly"), ["lint", file, "--config", join(ROOT, "redocly.yaml"), "--format=json"], { cwd: ROOT, env, maxBuffer: 64 << 20 })
      .catch((e: { stdout: string }) => e),
    run(bin("spectral"), [
      "lint",
      file,
      "--ruleset",
      join(ROOT, ".spectral.yaml"),
      "--format",
      "json",
      "--output",
      join(dir, "spectral.json"),
      "--quiet"
    ], {
      cwd: ROOT,
      env
    }).catch(() => undefined)
  ])
  redocly = JSON.parse(redoclyRun.stdout)
  spectral = JSON.parse(await readFile(join(dir, "spectral.json"), "utf8"))
}, 120_000)

afterAll(() => rm(dir, { recursive: true, force: true }))

const operations = () =>
  Object.entries<any>(spec.paths).flatMap(([path, item]) => Object.entries<any>(item).map(([method, op]) => ({ path, method, op })))

const resolve = (node: any) =>
  typeof node?.$ref === "string" ? node.$ref.split("/").slice(1).reduce((at: any, key: string) => at[key], spec) : node

describe("the OpenAPI document", () => {
  it("has no Redocly errors or warnings (recommended rules)", () => {
    expect(redocly.problems).toEqual([])
    expect(redocly.totals).toMatchObject({ errors: 0, warnings: 0 })
  })

  it("has no Spectral findings (spectral:oas)", () => {
    expect(spectral.map((r) => `${r.code} at ${r.path.join(".")}: ${r.message}`)).toEqual([])
  })

  it("names its servers, licence and contact, and describes every tag", () => {
    expect(spec.servers).toEqual([expect.objectContaining({ url: expect.stringMatching(/^http/) })])
    expect(spec.info.license).toMatchObject({ name: "MIT" })
    expect(spec.info.contact).toMatchObject({ name: expect.any(String) })
    expect(spec.tags.length).toBeGreaterThan(5)
    for (const tag of spec.tags) expect(tag.description, tag.name).toMatch(/\w{3,}/)
  })

  it("declares Idempotency-Key on every POST and the pipeline's response headers", () => {
    const posts = operations().filter((o) => o.method === "post")
    expect(posts.length).toBeGreaterThan(15)
    for (const { op, path } of posts) {
      const names = op.parameters.map((p: any) => resolve(p)).filter((p: any) => p.in === "header").map((p: any) => p.name)
      expect(names, path).toContain("Idempotency-Key")
    }
    expect(resolve({ $ref: "#/components/parameters/IdempotencyKey" }).schema).toMatchObject({ type: "string", maxLength: 255 })
    for (const { op, method, path } of operations()) {
      for (const [status, response] of Object.entries<any>(op.responses)) {
        const headers = Object.keys(resolve(response).headers ?? {})
        expect(headers, `${method} ${path} ${status}`).toEqual(
          expect.arrayContaining(["X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset", "RateLimit", "RateLimit-Policy"])
        )
        if (status === "429") expect(headers).toContain("Retry-After")
        if (status === "401") expect(headers).toContain("WWW-Authenticate")
        if (method === "post" && status.startsWith("2")) expect(headers).toContain("Idempotent-Replayed")
      }
    }
    expect(spec.paths["/v1/bookings"].post.responses["429"]).toBeDefined()
    expect(spec.paths["/v1/bookings"].post.responses["401"]).toBeDefined()
  })

  it("takes action bodies as an optional object without fields", () => {
    const actions = [
      "/v1/bookings/{id}/confirm",
      "/v1/bookings/{id}/complete",
      "/v1/bookings/{id}/no-show",
      "/v1/api-keys/exchange",
      "/v1/webhooks/{id}/deliveries/{did}/retry",
      "/v1/webhooks/{id}/test",
      "/v1/sandbox/reset"
    ]
    for (const path of actions) {
      const body = spec.paths[path].post.requestBody
      expect(body.required, path).toBe(false)
      expect(resolve(body.content["application/json"].schema), path).toMatchObject({ type: "object", additionalProperties: false })
    }
    expect(spec.paths["/v1/bookings"].post.requestBody.required).toBe(true)
  })

  it("documents the status a create answers with, whole numbers as integers", () => {
    for (const path of ["/v1/availability", "/v1/bookings", "/v1/services", "/v1/webhooks"]) {
      const statuses = Object.keys(spec.paths[path].post.responses)
      expect(statuses, path).toContain("201")
      expect(statuses, path).not.toContain("200")
    }
    expect(spec.components.schemas.Int).toBeUndefined()
    expect(spec.components.schemas.Service.properties.duration_minutes).toMatchObject({ type: "integer", minimum: 1, maximum: 1440 })
  })

  it("declares query parameters with their types: whole numbers with their bounds, booleans, lists of their values", () => {
    const query = (path: string, name: string) =>
      spec.paths[path].get.parameters.find((p: any) => p.in === "query" && p.name === name)?.schema
    const limits = operations().flatMap(({ op, path }) =>
      (op.parameters ?? []).filter((p: any) => p.in === "query" && p.name === "limit").map((p: any) => ({ path, schema: p.schema }))
    )
    expect(limits.length).toBeGreaterThanOrEqual(14)
    for (const { path, schema } of limits) expect(schema, path).toMatchObject({ type: "integer", minimum: 1, maximum: 100 })
    expect(query("/v1/bookings", "upcoming")).toMatchObject({ type: "boolean", description: expect.stringMatching(/^true: /) })
    expect(query("/v1/services", "active")).toMatchObject({ type: "boolean" })
    expect(query("/v1/bookings", "status").anyOf).toEqual([
      expect.objectContaining({ type: "string", enum: expect.arrayContaining(["confirmed"]) }),
      expect.objectContaining({ type: "array", items: expect.objectContaining({ enum: expect.arrayContaining(["confirmed"]) }) })
    ])
  })

  it("documents one booking as POST /v1/bookings' answer; series have their own create", () => {
    const answered = (path: string) => resolve(spec.paths[path].post.responses["201"]).content["application/json"].schema.anyOf
    expect(answered("/v1/bookings").map((s: any) => s.properties.object.enum)).toEqual([["booking"], ["booking"]])
    expect(answered("/v1/booking-series").map((s: any) => s.properties.object.enum)).toEqual([["booking_series"], ["booking_series"]])
    const seriesBody = resolve(spec.paths["/v1/booking-series"].post.requestBody.content["application/json"].schema)
    expect(seriesBody.required).toEqual(expect.arrayContaining(["service_id", "start", "recurrence"]))
    expect(seriesBody.properties.hold_id).toBeUndefined()
    const bookingBody = spec.components.schemas.BookingCreate.properties
    for (const field of ["recurrence", "on_conflict"]) {
      expect(bookingBody[field], field).toMatchObject({ deprecated: true, description: expect.stringContaining("POST /v1/booking-series") })
    }
  })

  it("carries no machine-made titles, and describes the fields of the main resources", () => {
    const titles: Array<string> = []
    const walk = (node: unknown): void => {
      if (Array.isArray(node)) node.forEach(walk)
      else if (typeof node === "object" && node !== null) {
        const title = (node as { title?: unknown }).title
        if (typeof title === "string") titles.push(title)
        Object.values(node).forEach(walk)
      }
    }
    walk(spec.paths)
    walk(spec.components.schemas)
    expect(titles.filter((t) => /\(|^int$|^unknown$/.test(t))).toEqual([])
    const undescribed: Array<string> = []
    for (
      const name of [
        "Booking",
        "BookingCreate",
        "Service",
        "ServiceCreate",
        "Staff",
        "Client",
        "ClientCreate",
        "Money",
        "Hold",
        "WebhookEndpoint"
      ]
    ) {
      const schema = spec.components.schemas[name]
      expect(schema, name).toBeDefined()
      for (const [field, property] of Object.entries<any>(schema.properties)) {
        const description: unknown = property.description ?? resolve(property.allOf?.[0] ?? property)?.description
        if (typeof description !== "string" || /character\(s\)|a number between|an array of/.test(description)) {
          undescribed.push(`${name}.${field}`)
        }
      }
    }
    expect(undescribed).toEqual([])
  })
})
