/**
 * The pipeline's own steps in isolation, printed (not asserted): CPU µs per call of
 * authentication (a cached API key), the gate (that and the access decision), rate limiting (memory store), the route table, the
 * access decision, the whole pipeline around an app that answers at once, a JSON body's
 * checks (beside making and reading the Fetch request it comes in), and a booking's Schema
 * encoding, each beside what whole in-process requests cost (GET /health, a read, a create, a
 * create refused by its schema, and a no-op `HttpApi` GET and POST for scale), with the heap
 * each call allocates. Run: `node --expose-gc --max-semi-space-size=256 --import tsx bench/http-steps.ts`
 * (without `--expose-gc` the allocation column is left out).
 */
import {
  HttpApi,
  HttpApiBuilder,
  HttpApiEndpoint,
  HttpApiError,
  HttpApiGroup,
  HttpServer,
  HttpServerRequest,
  HttpServerResponse
} from "@effect/platform"
import { Effect, Layer, ManagedRuntime, Schema } from "effect"
import { SlotwiseApi } from "../adapters/http/api.js"
import { makeAuthenticate } from "../adapters/http/middleware/authenticate.js"
import { Gate, makeGate, noOrigin } from "../adapters/http/middleware/gate.js"
import { readJsonBody } from "../adapters/http/middleware/body.js"
import { countRequest, policyOf } from "../adapters/http/middleware/ratelimit.js"
import { makePipeline } from "../adapters/http/middleware/pipeline.js"
import { makeRouteTable } from "../adapters/http/middleware/routes.js"
import { AccessServicesLive, createHttpHandler, CredentialsLive, storageLayer } from "../compose.js"
import { MemoryRateLimitStoreLive } from "../adapters/memory/ratelimit.js"
import { Accounts } from "../src/accounts/Accounts.js"
import { decideAccess } from "../src/auth/access.js"
import { Authenticator } from "../src/auth/Authenticator.js"
import { Booking } from "../src/bookings/booking.js"
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

/** Heap bytes (KB) one call leaves allocated, the young generation large enough that no collection runs in between. */
const allocKB = async (f: () => unknown): Promise<number | undefined> => {
  const gc = (globalThis as { gc?: () => void }).gc
  if (gc === undefined) return undefined
  for (let i = 0; i < 300; i++) await f()
  const runs: Array<number> = []
  for (let r = 0; r < 5; r++) {
    gc()
    const before = process.memoryUsage().heapUsed
    for (let i = 0; i < 100; i++) await f()
    runs.push((process.memoryUsage().heapUsed - before) / 100 / 1024)
  }
  return runs.sort((a, b) => a - b)[2]!
}

const runtime = ManagedRuntime.make(
  CredentialsLive.pipe(
    Layer.provideMerge(AccessServicesLive),
    Layer.provide(MemoryRateLimitStoreLive),
    Layer.provideMerge(storageLayer("memory"))
  )
)
const { keys } = await runtime.runPromise(
  Effect.flatMap(Accounts, (a) => a.create({ name: "Bench", plan: "business", rate_limit_per_minute: 1_000_000 }))
)
const secret = keys.sandbox.secret
const authenticate = makeAuthenticate(await runtime.runPromise(Authenticator), undefined)
const gate = makeGate(await runtime.runPromise(Authenticator), undefined)
const limiter = await runtime.runPromise(RateLimiter)
const routes = makeRouteTable(SlotwiseApi)
const rule = { auth: "key", scope: "bookings:read", publishable: false } as const
const caller = await runtime.runPromise(authenticate(`Bearer ${secret}`, rule))
const body = JSON.stringify({
  service_id: "svc_01M84X9MJBFVMG276GE6XW9ECQ",
  staff_id: "stf_01M84X9MJ5J9HFAG954DM1DQ83",
  start: "2027-03-29T09:00:00Z",
  client: { name: "Bob", email: "bob@example.com" }
})
const request = () =>
  HttpServerRequest.fromWeb(
    new Request("http://x/v1/bookings", {
      method: "POST",
      headers: { "content-type": "application/json", "content-length": String(body.length) },
      body
    })
  )

// The whole pipeline (steps 1-8) around an app that answers at once, beside that app alone.
const pipeline = await runtime.runPromise(Effect.provide(makePipeline({}), Gate.Default(undefined)))
const answer = HttpServerResponse.unsafeJson({ ok: true })
const getRequest = HttpServerRequest.fromWeb(
  new Request("http://x/v1/bookings/bkg_01M84X9MJPREH7HYNSVRASAFDA", { headers: { authorization: `Bearer ${secret}` } })
)
const piped = Effect.provideService(pipeline(Effect.succeed(answer)), HttpServerRequest.HttpServerRequest, getRequest)
const unpiped = Effect.provideService(Effect.succeed(answer), HttpServerRequest.HttpServerRequest, getRequest)
await Effect.runPromise(piped)

const handler = await createHttpHandler({ webhooks: false })
const account = await handler.createAccount({ name: "Bench", plan: "business", rate_limit_per_minute: 1_000_000 })
const key = account.keys.sandbox.secret
const call = (method: string, path: string, payload?: unknown) =>
  handler.fetch(
    new Request(`http://x${path}`, {
      method,
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      ...(payload !== undefined ? { body: JSON.stringify(payload) } : {})
    })
  ).then((r) => r.json() as Promise<any>)
const staff = await call("POST", "/v1/staff", { name: "Ana", time_zone: "UTC" })
const service = await call("POST", "/v1/services", { name: "Cut", duration_minutes: 30, staff_ids: [staff.id], max_advance_days: 1830 })
await call("POST", "/v1/availability", {
  staff_id: staff.id,
  type: "weekly",
  weekdays: [1, 2, 3, 4, 5, 6, 7],
  start_time: "00:00",
  end_time: "24:00"
})
const booking = await call("POST", "/v1/bookings", {
  service_id: service.id,
  staff_id: staff.id,
  start: new Date(Math.ceil(Date.now() / 86_400_000) * 86_400_000 + 86_400_000 * 2).toISOString(),
  client: { name: "Bob" }
})
const decoded = Schema.decodeUnknownSync(Booking)(booking)
const encode = Schema.encodeSync(Booking)

// A no-op HttpApi (one GET, one POST decoding a four-string body) for scale.
const Tiny = Schema.Struct({ id: Schema.String, object: Schema.Literal("booking"), start: Schema.String, status: Schema.String })
const NoopApi = HttpApi.make("noop").add(
  HttpApiGroup.make("g")
    .add(HttpApiEndpoint.get("get", "/v1/bookings/:id").setPath(Schema.Struct({ id: Schema.String })).addSuccess(Tiny))
    .add(
      HttpApiEndpoint.post("create", "/v1/bookings").setPayload(
        Schema.Struct({ service_id: Schema.String, staff_id: Schema.String, client_id: Schema.String, start: Schema.String })
      ).addSuccess(Tiny, { status: 201 })
    )
)
const noop = HttpApiBuilder.toWebHandler(Layer.mergeAll(
  HttpApiBuilder.api(NoopApi).pipe(
    Layer.provide(
      HttpApiBuilder.group(
        NoopApi,
        "g",
        (h) =>
          h.handle(
            "get",
            ({ path }) => Effect.succeed({ id: path.id, object: "booking" as const, start: "2027-01-01T10:00:00Z", status: "confirmed" })
          )
            .handle(
              "create",
              ({ payload }) => Effect.succeed({ id: "bkg_01", object: "booking" as const, start: payload.start, status: "confirmed" })
            )
      )
    )
  ),
  HttpServer.layerContext
))
const client = await call("POST", "/v1/clients", { name: "Cy" })
const createBody = (start: string) => JSON.stringify({ service_id: service.id, staff_id: staff.id, client_id: client.id, start })
let slotIndex = 10
const nextStart = () => new Date(Math.ceil(Date.now() / 86_400_000) * 86_400_000 + 86_400_000 * 3 + (slotIndex++) * 1_800_000).toISOString()
const send = (fetch: (r: Request) => Promise<Response>, method: string, path: string, body?: string) => () =>
  fetch(
    new Request(`http://x${path}`, {
      method,
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      ...(body !== undefined ? { body } : {})
    })
  )
    .then((r) => r.arrayBuffer())
const createDecoder = routes.match("POST", "/v1/bookings")
const decodeCreateBody = createDecoder._tag === "Found" ? createDecoder.payload! : () => {
  throw new Error("no create route")
}
const parsedCreate = JSON.parse(createBody("2027-03-29T09:00:00Z"))
const decodeFailure = Schema.decodeUnknownEither(Schema.Struct({ start: Schema.String }))({ start: 1 })
const parseError = decodeFailure._tag === "Left" ? decodeFailure.left : undefined!

const steps: Array<[string, number, () => unknown]> = [
  ["authenticate (cached API key)", 20_000, () => Effect.runSync(authenticate(`Bearer ${secret}`, rule))],
  ["gate: authenticate and decide access", 20_000, () => Effect.runSync(gate(rule, `Bearer ${secret}`, () => "127.0.0.1", noOrigin))],
  ["rate limit (memory store)", 20_000, () => Effect.runSync(countRequest(limiter, policyOf(caller, () => "127.0.0.1")))],
  ["route table match", 50_000, () => routes.match("GET", "/v1/bookings/bkg_01M84X9MJPREH7HYNSVRASAFDA")],
  ["access decision", 50_000, () => decideAccess(rule, caller, undefined)],
  ["JSON body read and checked", 5_000, () => Effect.runPromise(readJsonBody(request()))],
  ["  of which: the Fetch request, read", 5_000, () => Effect.runPromise(request().arrayBuffer)],
  ["booking create body decoded", 20_000, () => decodeCreateBody(parsedCreate)],
  ["pipeline around a no-op app", 20_000, () => Effect.runSync(piped)],
  ["  the no-op app alone", 20_000, () => Effect.runSync(unpiped)],
  ["booking Schema encode", 20_000, () => encode(decoded)],
  ["platform decode error of one field", 2_000, () => Effect.runSync(HttpApiError.HttpApiDecodeError.fromParseError(parseError))],
  ["whole GET /health (no key)", 3_000, () => handler.fetch(new Request("http://x/health")).then((r) => r.text())],
  ["whole GET no-op HttpApi", 3_000, send(noop.handler, "GET", "/v1/bookings/bkg_01")],
  ["whole GET /v1/bookings/{id}", 3_000, send(handler.fetch, "GET", `/v1/bookings/${booking.id}`)],
  ["whole POST no-op HttpApi", 3_000, send(noop.handler, "POST", "/v1/bookings", createBody("2027-03-29T09:00:00Z"))],
  ["whole POST refused by its schema", 3_000, send(handler.fetch, "POST", "/v1/bookings", createBody("not a time"))],
  ["whole POST /v1/bookings (memory)", 2_000, () => send(handler.fetch, "POST", "/v1/bookings", createBody(nextStart()))()]
]
console.log(`${"".padEnd(36)} ${"CPU µs".padStart(7)} ${"KB".padStart(7)}  (KB: heap allocated per call; run with --expose-gc)`)
for (const [name, n, f] of steps) {
  const micros = await cpuMicros(n, f)
  const kb = await allocKB(f)
  console.log(`${name.padEnd(36)} ${micros.toFixed(1).padStart(7)} ${kb === undefined ? "      -" : kb.toFixed(1).padStart(7)}`)
}
await noop.dispose()
await handler.close()
await runtime.dispose()
