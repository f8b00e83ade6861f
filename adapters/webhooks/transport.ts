/**
 * One delivery attempt over HTTP: a `POST` with keep-alive connections, a hard timeout for
 * the whole exchange (connect, headers, body), no redirect following (a 3xx is just a
 * non-2xx answer), and the SSRF guard on every connection: literal addresses are checked
 * here, names in `guardedLookup` at connect time. It never throws: every outcome, from a
 * refused connection to a timeout, comes back as an `AttemptResult` for the core to judge.
 */
import * as http from "node:http"
import * as https from "node:https"
import { performance } from "node:perf_hooks"
import { addressBlockReason, hostOf, isIpLiteral } from "../../src/webhooks/address.js"
import type { AttemptResult } from "../../src/webhooks/retrySchedule.js"
import { BlockedAddressError, guardedLookup, type Resolver, systemResolver } from "./guard.js"

export interface WebhookRequest {
  readonly url: string
  readonly headers: Readonly<Record<string, string>>
  readonly body: string
}

export interface Transport {
  readonly send: (request: WebhookRequest) => Promise<AttemptResult>
  /** Closes idle keep-alive connections. */
  readonly close: () => void
}

export interface HttpTransportOptions {
  /** The whole exchange must finish within this (docs/api.md §4: 10 s). */
  readonly timeoutMs: number
  readonly allowPrivate: boolean
  /** Connections per receiver origin. */
  readonly maxSockets: number
  readonly resolver?: Resolver
  readonly userAgent?: string
}

const EXCERPT_CHARS = 200

class TimeoutError extends Error {
  constructor(ms: number) {
    super(`timed out after ${ms} ms`)
  }
}

const describeError = (error: unknown): string => {
  if (error instanceof TimeoutError || error instanceof BlockedAddressError) return error.message
  const e = error as { readonly code?: unknown; readonly message?: unknown }
  switch (e?.code) {
    case "ECONNREFUSED":
      return "connection refused"
    case "ECONNRESET":
      return "connection reset by the receiver"
    case "ENOTFOUND":
      return "host not found"
    case "EAI_AGAIN":
      return "host name lookup failed (temporary)"
    case "EHOSTUNREACH":
    case "ENETUNREACH":
      return "receiver unreachable"
  }
  const message = typeof e?.message === "string" ? e.message : String(error)
  return typeof e?.code === "string" ? `${message} (${e.code})` : message
}

export const makeHttpTransport = (options: HttpTransportOptions): Transport => {
  const lookup = guardedLookup(options.resolver ?? systemResolver, options.allowPrivate)
  const agentOptions = { keepAlive: true, maxSockets: options.maxSockets, maxFreeSockets: options.maxSockets, lookup }
  const httpAgent = new http.Agent(agentOptions)
  const httpsAgent = new https.Agent(agentOptions)
  const userAgent = options.userAgent ?? "Slotwise-Webhooks/1.0"

  const send = (request: WebhookRequest): Promise<AttemptResult> =>
    new Promise<AttemptResult>((resolve) => {
      const started = performance.now()
      const elapsed = () => performance.now() - started
      let settled = false
      let timer: ReturnType<typeof setTimeout> | undefined
      let req: http.ClientRequest | undefined
      const finish = (result: AttemptResult) => {
        if (settled) return
        settled = true
        clearTimeout(timer)
        resolve(result)
      }
      const fail = (error: unknown) => finish({ _tag: "Error", error: describeError(error), latency_ms: elapsed() })

      let url: URL
      try {
        url = new URL(request.url)
      } catch (error) {
        return fail(error)
      }
      const host = hostOf(url)
      if (!options.allowPrivate && isIpLiteral(host)) {
        const reason = addressBlockReason(host)
        if (reason !== undefined) return fail(new BlockedAddressError(host, reason))
      }
      const secure = url.protocol === "https:"
      timer = setTimeout(() => {
        const error = new TimeoutError(options.timeoutMs)
        fail(error)
        req?.destroy(error)
      }, options.timeoutMs)
      try {
        req = (secure ? https : http).request(url, {
          method: "POST",
          agent: secure ? httpsAgent : httpAgent,
          lookup,
          headers: {
            ...request.headers,
            "content-type": "application/json",
            "content-length": String(Buffer.byteLength(request.body)),
            "user-agent": userAgent
          }
        })
      } catch (error) {
        return fail(error)
      }
      req.on("error", fail)
      req.on("response", (res) => {
        const status = res.statusCode ?? 0
        const ok = status >= 200 && status < 300
        let excerpt = ""
        res.setEncoding("utf8")
        res.on("data", (chunk: string) => {
          if (!ok && excerpt.length < EXCERPT_CHARS) excerpt += chunk.slice(0, EXCERPT_CHARS - excerpt.length)
        })
        res.on("error", fail)
        res.on("end", () => {
          const retryAfter = res.headers["retry-after"]
          finish({
            _tag: "Response",
            status,
            latency_ms: elapsed(),
            retry_after: Array.isArray(retryAfter) ? retryAfter[0] : retryAfter,
            ...(ok ? {} : { body_excerpt: excerpt.replace(/\s+/g, " ").trim() })
          })
        })
      })
      req.end(request.body)
    })

  return {
    send,
    close: () => {
      httpAgent.destroy()
      httpsAgent.destroy()
    }
  }
}
