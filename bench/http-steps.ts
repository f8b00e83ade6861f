/**
 * The pipeline's own steps in isolation, printed (not asserted): CPU µs per call of
 * authentication (a cached API key), rate limiting (memory store), the route table, the
 * access decision, a JSON body's checks (beside making and reading the Fetch request it
 * comes in), and a booking's Schema encoding, each beside what a whole in-process
 * GET /v1/bookings/{id} and GET /health cost. Run: `npx tsx bench/http-steps.ts`.
 */
import { HttpServerRequest } from "@effect/platform"
import { Effect, Layer, ManagedRuntime, Schema } from "effect"
import { SlotwiseApi } from "../adapters/http/api.js"
import { makeAuthenticate } from "../adapters/http/middleware/authenticate.js"
import { readJsonBody } from "../adapters/http/middleware/body.js"
import { countRequest, policyOf } from "../adapters/http/middleware/ratelimit.js"
import { makeRouteTable } from "../adapters/http/middleware/routes.js"
import { AccessServicesLive, createHttpHandler, CredentialsLive, storageLayer } from "../compose.js"
import { MemoryRateLimitStoreLive } from "../adapters/memory/ratelimit.js"
import { Accounts } from "../src/Accounts.js"
import { decideAccess } from "../src/auth/access.js"
import { Authenticator } from "../src/auth/Authenticator.js"
import { Booking } from "../src/domain/booking.js"
import { RateLimiter } from "../src/ratelimit/RateLimiter.js"

const cpuMicros = async (n: number, f: () => unknown): Promise<number> => {
  for (let i = 0; i < Math.min(n, 2000); i++) await f()
  const runs: Array<number> = []
  for (let r = 0; r < 5; r++) {
    const c0 = process.cpuUsage()
    for (let i = 0; i < n / 5; i++) await f()
    const c = process.cpuUsage(c0)
    runs.push((c.user + c.system) / (n / 5))
  }
  return runs.sort((a, b) => a - b)[2]!
}

const runtime = ManagedRuntime.make(
  CredentialsLive.pipe(Layer.provideMerge(AccessServicesLive), Layer.provide(MemoryRateLimitStoreLive), Layer.provideMerge(storageLayer("memory")))
)
const { keys } = await runtime.runPromise(Effect.flatMap(Accounts, (a) => a.create({ name: "Bench", plan: "business", rate_limit_per_minute: 1_000_000 })))
const secret = keys.sandbox.secret
const authenticate = makeAuthenticate(await runtime.runPromise(Authenticator), undefined)
const limiter = await runtime.runPromise(RateLimiter)
const routes = makeRouteTable(SlotwiseApi)
const rule = { auth: "key", scope: "bookings:read", publishable: false } as const
const caller = await runtime.runPromise(authenticate(`Bearer ${secret}`, rule))
const body = JSON.stringify({ service_id: "svc_01M84X9MJBFVMG276GE6XW9ECQ", staff_id: "stf_01M84X9MJ5J9HFAG954DM1DQ83", start: "2027-03-29T09:00:00Z", client: { name: "Bob", email: "bob@example.com" } })
const request = () =>
  HttpServerRequest.fromWeb(new Request("http://x/v1/bookings", { method: "POST", headers: { "content-type": "application/json", "content-length": String(body.length) }, body }))

const handler = await createHttpHandler({ webhooks: false })
const account = await handler.createAccount({ name: "Bench", plan: "business", rate_limit_per_minute: 1_000_000 })
const key = account.keys.sandbox.secret
const call = (method: string, path: string, payload?: unknown) =>
  handler.fetch(new Request(`http://x${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    ...(payload !== undefined ? { body: JSON.stringify(payload) } : {})
  })).then((r) => r.json() as Promise<any>)
const staff = await call("POST", "/v1/staff", { name: "Ana", time_zone: "UTC" })
const service = await call("POST", "/v1/services", { name: "Cut", duration_minutes: 30, staff_ids: [staff.id] })
await call("POST", "/v1/availability", { staff_id: staff.id, type: "weekly", weekdays: [1, 2, 3, 4, 5, 6, 7], start_time: "00:00", end_time: "24:00" })
const booking = await call("POST", "/v1/bookings", { service_id: service.id, staff_id: staff.id, start: new Date(Math.ceil(Date.now() / 86_400_000) * 86_400_000 + 86_400_000 * 2).toISOString(), client: { name: "Bob" } })
const decoded = Schema.decodeUnknownSync(Booking)(booking)
const encode = Schema.encodeSync(Booking)

const figures: Array<[string, number]> = [
  ["authenticate (cached API key)", await cpuMicros(20_000, () => Effect.runSync(authenticate(`Bearer ${secret}`, rule)))],
  ["rate limit (memory store)", await cpuMicros(20_000, () => Effect.runSync(countRequest(limiter, policyOf(caller, () => "127.0.0.1"))))],
  ["route table match", await cpuMicros(50_000, () => routes.match("GET", "/v1/bookings/bkg_01M84X9MJPREH7HYNSVRASAFDA"))],
  ["access decision", await cpuMicros(50_000, () => decideAccess(rule, caller, undefined))],
  ["JSON body read and checked", await cpuMicros(5_000, () => Effect.runPromise(readJsonBody(request())))],
  ["  of which: the Fetch request, read", await cpuMicros(5_000, () => Effect.runPromise(request().arrayBuffer))],
  ["booking Schema encode", await cpuMicros(20_000, () => encode(decoded))],
  ["whole GET /v1/bookings/{id}", await cpuMicros(3_000, () => call("GET", `/v1/bookings/${booking.id}`))],
  ["whole GET /health (no key)", await cpuMicros(3_000, () => handler.fetch(new Request("http://x/health")).then((r) => r.text()))]
]
for (const [name, micros] of figures) console.log(`${name.padEnd(32)} ${micros.toFixed(1).padStart(7)} CPU µs`)
await handler.close()
await runtime.dispose()
