/**
 * Test servers over real HTTP on 127.0.0.1 (a free port each): the server layer of the
 * binary on in-memory storage, with a controlled clock so tests move time instead of
 * sleeping, an admin token, and the first-start account's keys.
 */
import { Context, Duration, Effect, Exit, Fiber, Layer, TestClock } from "effect"
import * as http from "node:http"
import { type ServerOptions, serverLayer, type StorageChoice } from "../../compose.js"
import type { AccountWithKeys } from "../../src/domain/account.js"
import { parseInstant } from "../../src/domain/common.js"
import { TestClockAt } from "../../src/testing/testClock.js"

export const ADMIN_TOKEN = "test-admin-token-0123456789"
export const START = "2027-03-26T08:00:00Z" // a Friday

export interface TestServer {
  readonly url: string
  readonly first: AccountWithKeys
  readonly advance: (ms: number) => Promise<void>
  readonly now: () => number
  readonly close: () => Promise<void>
}

export interface StartOptions {
  readonly storage?: StorageChoice
  readonly now?: string
  readonly adminToken?: string | null
  readonly prefix?: string
  /** `--allow-private-webhooks` (receivers on 127.0.0.1). */
  readonly allowPrivateWebhooks?: boolean
  /** Run the webhook dispatcher (default true, as the server does), or its options. */
  readonly webhooks?: ServerOptions["webhooks"]
}

export const startServer = async (options: StartOptions = {}): Promise<TestServer> => {
  let clock: TestClock.TestClock | undefined
  let url = ""
  let first: AccountWithKeys | undefined
  const layer = serverLayer({
    port: 0,
    host: "127.0.0.1",
    storage: options.storage ?? "memory",
    adminToken: options.adminToken === null ? undefined : (options.adminToken ?? ADMIN_TOKEN),
    shutdownGraceMs: 100,
    allowPrivateWebhooks: options.allowPrivateWebhooks ?? false,
    webhooks: options.webhooks ?? true,
    onListening: (u) => (url = u),
    onFirstAccount: (created) => (first = created)
  }).pipe(Layer.provide(Layer.tap(TestClockAt(parseInstant(options.now ?? START)!), (context) => Effect.sync(() => (clock = Context.get(context, TestClock.TestClock))))))
  const fiber = Effect.runFork(Layer.launch(layer))
  for (let i = 0; i < 400 && url === ""; i++) {
    const poll = fiber.unsafePoll()
    if (poll !== null && Exit.isFailure(poll)) throw new Error(`server failed to start: ${String(poll.cause)}`)
    await new Promise((r) => setTimeout(r, 10))
  }
  if (url === "" || first === undefined || clock === undefined) throw new Error("server did not start")
  const started = clock
  return {
    url,
    first,
    advance: (ms) => Effect.runPromise(started.adjust(Duration.millis(ms))),
    now: () => started.unsafeCurrentTimeMillis(),
    close: () => Effect.runPromise(Fiber.interrupt(fiber)).then(() => undefined)
  }
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 64 })

export interface Reply {
  readonly status: number
  readonly headers: Headers
  readonly text: string
  readonly json: any
}

export interface RequestOptions {
  readonly key?: string | undefined
  readonly body?: unknown
  /** Sent as is (overrides `body`). */
  readonly raw?: string | Uint8Array | undefined
  readonly headers?: Record<string, string>
}

export const request = async (base: string, method: string, path: string, options: RequestOptions = {}): Promise<Reply> => {
  const headers: Record<string, string> = { ...options.headers }
  if (options.key !== undefined) headers["authorization"] = `Bearer ${options.key}`
  let body: string | Uint8Array | undefined = options.raw
  if (body === undefined && options.body !== undefined) {
    body = JSON.stringify(options.body)
    headers["content-type"] ??= "application/json"
  }
  if (body !== undefined && headers["content-length"] === undefined && headers["transfer-encoding"] === undefined) {
    headers["content-length"] = String(typeof body === "string" ? Buffer.byteLength(body) : body.byteLength)
  }
  const { status, responseHeaders, text } = await new Promise<{ status: number; responseHeaders: Headers; text: string }>(
    (resolve, reject) => {
      const req = http.request(base + path, { method, headers, agent }, (res) => {
        const chunks: Array<Buffer> = []
        res.on("data", (c: Buffer) => chunks.push(c))
        res.on("end", () => {
          const h = new Headers()
          for (const [k, v] of Object.entries(res.headers)) if (v !== undefined) h.set(k, Array.isArray(v) ? v.join(", ") : v)
          resolve({ status: res.statusCode!, responseHeaders: h, text: Buffer.concat(chunks).toString("utf8") })
        })
        res.on("error", reject)
      })
      req.on("error", reject)
      req.end(body)
    }
  )
  const response = { status, headers: responseHeaders }
  let json: any = undefined
  try {
    json = text === "" ? undefined : JSON.parse(text)
  } catch {
    json = undefined
  }
  return { status: response.status, headers: response.headers, text, json }
}

/** A client bound to a server and a key. */
export const client = (base: string, key?: string) => ({
  get: (path: string, options: RequestOptions = {}) => request(base, "GET", path, { key, ...options }),
  post: (path: string, body?: unknown, options: RequestOptions = {}) => request(base, "POST", path, { key, body, ...options }),
  patch: (path: string, body?: unknown, options: RequestOptions = {}) => request(base, "PATCH", path, { key, body, ...options }),
  del: (path: string, options: RequestOptions = {}) => request(base, "DELETE", path, { key, ...options }),
  send: (method: string, path: string, options: RequestOptions = {}) => request(base, method, path, { key, ...options })
})
export type Client = ReturnType<typeof client>

/** Asserts an RFC 9457 problem response and returns its body. */
export const expectProblem = (reply: Reply, status: number, code?: string) => {
  if (reply.status !== status || (code !== undefined && reply.json?.code !== code)) {
    throw new Error(`expected ${status}${code ? ` ${code}` : ""}, got ${reply.status}: ${reply.text}`)
  }
  if (!reply.headers.get("content-type")?.startsWith("application/problem+json")) {
    throw new Error(`expected application/problem+json, got ${reply.headers.get("content-type")}: ${reply.text}`)
  }
  const p = reply.json
  if (typeof p?.type !== "string" || typeof p?.title !== "string" || p?.status !== status || typeof p?.code !== "string" || typeof p?.detail !== "string") {
    throw new Error(`not a problem document: ${reply.text}`)
  }
  return p
}

export const expectStatus = (reply: Reply, status: number) => {
  if (reply.status !== status) throw new Error(`expected ${status}, got ${reply.status}: ${reply.text}`)
  return reply.json
}

/**
 * A bookable setup: staff member with weekday hours 09:00–17:00 UTC, a 30-minute service.
 * Monday 2027-03-29 09:00Z is the first bookable start after START.
 */
export const seed = async (api: Client, options: { readonly capacity?: number; readonly price?: { amount: number; currency: string } } = {}) => {
  const staff = expectStatus(await api.post("/v1/staff", { name: "Ana", time_zone: "UTC" }), 201)
  const service = expectStatus(
    await api.post("/v1/services", {
      name: "Cut",
      duration_minutes: 30,
      staff_ids: [staff.id],
      ...(options.capacity !== undefined ? { capacity: options.capacity } : {}),
      ...(options.price !== undefined ? { price: options.price } : {})
    }),
    201
  )
  const rule = expectStatus(
    await api.post("/v1/availability", {
      staff_id: staff.id,
      type: "weekly",
      weekdays: [1, 2, 3, 4, 5],
      start_time: "09:00",
      end_time: "17:00"
    }),
    201
  )
  const client = expectStatus(await api.post("/v1/clients", { name: "Bob", email: "bob@example.com" }), 201)
  return { staff, service, rule, client }
}

export const MONDAY_9 = "2027-03-29T09:00:00Z"

/** A new account through the operator API: `{account, keys}` with both environments' keys. */
export const newAccount = async (server: TestServer, body: Record<string, unknown> = {}) =>
  expectStatus(await client(server.url, ADMIN_TOKEN).post("/admin/v1/accounts", { name: "Other", plan: "business", ...body }), 201)

/** A secret key of `api`'s tenant with only these scopes. */
export const scopedKey = async (api: Client, scopes: ReadonlyArray<string>): Promise<string> =>
  expectStatus(await api.post("/v1/api-keys", { name: `only ${scopes.join(" ")}`, type: "secret", scopes }), 201).secret
