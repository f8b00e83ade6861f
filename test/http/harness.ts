/**
 * Test servers over real HTTP on 127.0.0.1 (a free port each): the server layer of the
 * binary on in-memory storage, with a controlled clock so tests move time instead of
 * sleeping, an admin token, and the first-start account's keys.
 */
import { Context, Duration, Effect, Exit, Fiber, Layer, TestClock } from "effect"
import { type ChildProcess, spawn, spawnSync, type SpawnSyncReturns } from "node:child_process"
import * as http from "node:http"
import * as path from "node:path"
import * as readline from "node:readline"
import { fileURLToPath } from "node:url"
import { type ServerOptions, serverLayer, type StorageChoice } from "../../compose.js"
import type { AccountWithKeys } from "../../src/accounts/account.js"
import { parseInstant } from "../../src/domain/common.js"
import { TestClockAt } from "../../src/testing/testClock.js"
import { bundled } from "./bundle.js"

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
  /** Further server options (`dnsServer`, `trustProxy`, `publicUrl`, …). */
  readonly serve?: Partial<ServerOptions>
  /** `--trust-proxy`: the client address comes from `X-Forwarded-For`. */
  readonly trustProxy?: boolean
}

export const startServer = async (options: StartOptions = {}): Promise<TestServer> => {
  let clock: TestClock.TestClock | undefined
  let url = ""
  let first: AccountWithKeys | undefined
  let listening = () => {}
  const layer = serverLayer({
    port: 0,
    host: "127.0.0.1",
    storage: options.storage ?? "memory",
    adminToken: options.adminToken === null ? undefined : (options.adminToken ?? ADMIN_TOKEN),
    shutdownGraceMs: 100,
    allowPrivateWebhooks: options.allowPrivateWebhooks ?? false,
    webhooks: options.webhooks ?? true,
    trustProxy: options.trustProxy ?? false,
    ...options.serve,
    onListening: (u) => {
      url = u
      listening()
    },
    onFirstAccount: (created) => (first = created)
  }).pipe(
    Layer.provide(
      Layer.tap(
        TestClockAt(parseInstant(options.now ?? START)!),
        (context) => Effect.sync(() => (clock = Context.get(context, TestClock.TestClock)))
      )
    )
  )
  const fiber = Effect.runFork(Layer.launch(layer))
  // Wait for the listening callback (or the layer failing), however long a busy machine takes:
  // the test's own timeout bounds a server that never starts.
  await new Promise<void>((resolve, reject) => {
    listening = resolve
    fiber.addObserver((exit) =>
      reject(new Error(`server stopped before listening: ${Exit.isFailure(exit) ? String(exit.cause) : "no failure"}`))
    )
    if (url !== "") resolve()
  })
  if (first === undefined || clock === undefined) throw new Error("server listened before creating the first account")
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
  /** Called once the whole request has been handed to the operating system. */
  readonly sent?: () => void
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
      if (options.sent !== undefined) req.on("finish", options.sent)
      req.end(body)
    }
  )
  return replyOf(status, responseHeaders, text)
}

/** A reply with its body parsed as JSON where it is JSON (`json` is undefined otherwise). */
export const replyOf = (status: number, headers: Headers, text: string): Reply => {
  let json: any
  try {
    json = text === "" ? undefined : JSON.parse(text)
  } catch {
    json = undefined
  }
  return { status, headers, text, json }
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
  if (
    typeof p?.type !== "string" || typeof p?.title !== "string" || p?.status !== status || typeof p?.code !== "string" ||
    typeof p?.detail !== "string"
  ) {
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
export const seed = async (
  api: Client,
  options: { readonly capacity?: number; readonly price?: { amount: number; currency: string } } = {}
) => {
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

// ---- the `slotwise` binary in a child process ------------------------------------------

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..")
/** main.ts bundled (see bundle.ts): a server from it starts in a fraction of tsx's time. */
export const binary = (): Promise<string> => bundled("main.ts")

/** Runs the binary to completion (`--help`, `accounts create`, a usage error). */
export const runCli = async (args: ReadonlyArray<string>, env: Record<string, string> = {}): Promise<SpawnSyncReturns<string>> =>
  spawnSync(process.execPath, [await binary(), ...args], { cwd: root, encoding: "utf8", env: { ...process.env, ...env } })

export interface ServerProcess {
  readonly url: string
  /** stdout, line by line, as it arrives. */
  readonly lines: Array<string>
  readonly process: ChildProcess
  readonly exited: Promise<{ readonly code: number | null; readonly signal: NodeJS.Signals | null }>
}

const spawned: Array<ChildProcess> = []

/** SIGKILLs every server process still running (afterAll). */
export const killServers = () => {
  for (const child of spawned.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL")
}

/** `slotwise serve --port 0 …args`, resolved once it prints "listening on …". */
export const serveProcess = async (args: ReadonlyArray<string>, env: Record<string, string> = {}): Promise<ServerProcess> => {
  const entry = await binary()
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [entry, "serve", "--port", "0", ...args], {
      cwd: root,
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env, ...env }
    })
    spawned.push(child)
    const lines: Array<string> = []
    let stderr = ""
    child.stderr!.on("data", (d) => (stderr += String(d)))
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((r) =>
      child.on("exit", (code, signal) => r({ code, signal }))
    )
    readline.createInterface({ input: child.stdout! }).on("line", (line) => {
      lines.push(line)
      const m = /^listening on (http:\/\/\S+)$/.exec(line)
      if (m) resolve({ url: m[1]!, lines, process: child, exited })
    })
    void exited.then((e) => reject(new Error(`server exited (${e.code ?? e.signal}) before listening: ${stderr}`)))
  })
}
