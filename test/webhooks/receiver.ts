import { Webhook, WebhookVerificationError } from "standardwebhooks"
/**
 * A real HTTP receiver on 127.0.0.1 for webhook tests: records every request (headers,
 * body, arrival time) and answers as the test says (200 unless told otherwise).
 */
import * as http from "node:http"
import type { AddressInfo, Socket } from "node:net"
import { performance } from "node:perf_hooks"
import type { SchedulingClient } from "../../index.js"

export interface Received {
  readonly method: string
  readonly id: string
  readonly timestamp: string
  readonly signature: string
  readonly headers: Readonly<Record<string, string>>
  readonly body: string
  readonly path: string
  /** performance.now() at arrival */
  readonly at: number
}

export type Responder = (request: Received, res: http.ServerResponse) => void

export interface Receiver {
  readonly url: string
  readonly port: number
  readonly received: Array<Received>
  /** How the receiver answers from now on. */
  respond: Responder
  /** Requests per webhook-id. */
  readonly countOf: (id: string) => number
  readonly ids: () => Set<string>
  readonly close: () => Promise<void>
}

export const ok: Responder = (_request, res) => {
  res.writeHead(200, { "content-type": "text/plain" })
  res.end("ok")
}

export const status = (code: number, headers: Record<string, string> = {}): Responder => (_request, res) => {
  res.writeHead(code, { "content-type": "text/plain", ...headers })
  res.end(`status ${code}`)
}

export const startReceiver = async (respond: Responder = ok): Promise<Receiver> => {
  const received: Array<Received> = []
  const counts = new Map<string, number>()
  const sockets = new Set<Socket>()
  const receiver: Receiver = {
    url: "",
    port: 0,
    received,
    respond,
    countOf: (id) => counts.get(id) ?? 0,
    ids: () => new Set(counts.keys()),
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy()
        server.close(() => resolve())
      })
  }
  const server = http.createServer((req, res) => {
    const chunks: Array<Buffer> = []
    req.on("data", (chunk: Buffer) => chunks.push(chunk))
    req.on("end", () => {
      const headers: Record<string, string> = {}
      for (const [key, value] of Object.entries(req.headers)) {
        if (typeof value === "string") headers[key] = value
      }
      const request: Received = {
        method: req.method ?? "",
        id: headers["webhook-id"] ?? "",
        timestamp: headers["webhook-timestamp"] ?? "",
        signature: headers["webhook-signature"] ?? "",
        headers,
        body: Buffer.concat(chunks).toString("utf8"),
        path: req.url ?? "/",
        at: performance.now()
      }
      received.push(request)
      counts.set(request.id, (counts.get(request.id) ?? 0) + 1)
      receiver.respond(request, res)
    })
  })
  server.keepAliveTimeout = 30_000
  server.on("connection", (socket) => {
    sockets.add(socket)
    socket.on("close", () => sockets.delete(socket))
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const port = (server.address() as AddressInfo).port
  Object.assign(receiver, { url: `http://127.0.0.1:${port}/hooks`, port })
  return receiver
}

/**
 * Polls `check` until it holds, or fails after `timeoutMs` of real time. The deadline is
 * generous on purpose: it only bounds a failing test; a passing one returns as soon as the
 * condition holds, however busy the machine is.
 */
export const waitFor = async (check: () => boolean | Promise<boolean>, timeoutMs = 20_000, what = "condition"): Promise<void> => {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    if (await check()) return
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 5))
  }
}

/** The dispatcher's progress, seen from outside: see `startMarker`. */
export interface Marker {
  /** Resolves once the dispatcher has claimed, sent and recorded everything due by now. */
  readonly caughtUp: () => Promise<void>
  readonly close: () => Promise<void>
}

/**
 * A marker endpoint on its own receiver. `caughtUp` sends it a `webhook.test`, due now, and
 * waits until its outcome is recorded. The claim that takes the marker takes everything
 * else due by then (oldest due first, so those are launched before it), so a test can show
 * that nothing more happens at the current clock time without sleeping for a while.
 */
export const startMarker = async (s: Pick<SchedulingClient, "webhooks">): Promise<Marker> => {
  const receiver = await startReceiver()
  // A type none of these tests emit: the marker only ever gets its test events.
  const endpoint = await s.webhooks.create({ url: receiver.url, events: ["staff.deleted"], description: "marker" })
  return {
    caughtUp: async () => {
      const sent = await s.webhooks.sendTest(endpoint.id)
      await waitFor(
        async () => (await s.webhooks.getDelivery(endpoint.id, sent.id)).status === "succeeded",
        20_000,
        "the dispatcher to catch up"
      )
    },
    close: receiver.close
  }
}

/** A port nothing listens on: bound and released. */
export const closedPort = async (): Promise<number> => {
  const server = http.createServer()
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const port = (server.address() as AddressInfo).port
  await new Promise<void>((resolve) => server.close(() => resolve()))
  return port
}

/** Whether the official Standard Webhooks verifier accepts a received request for `secret`. */
export const verifies = (secret: string, request: Pick<Received, "body" | "headers">): boolean => {
  try {
    new Webhook(secret).verify(request.body, request.headers)
    return true
  } catch (error) {
    if (error instanceof WebhookVerificationError) return false
    throw error
  }
}
