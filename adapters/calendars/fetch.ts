/**
 * One conditional GET of a calendar feed, within the limits of docs/api.md §12: the whole
 * exchange (redirects included) in 10 s, at most 5 MB of body (counted as it arrives, after
 * decompression; a larger feed is abandoned at once), at most 3 redirects. Every connection
 * goes through the outbound address guard: literal addresses are checked here, names by the
 * `lookup` given (the webhook guard's, wired by the composition root) when connecting, for
 * the first address and for each redirect's target alike.
 */
import * as http from "node:http"
import * as https from "node:https"
import type { LookupFunction } from "node:net"
import * as zlib from "node:zlib"
import { literalHostBlockReason } from "../../src/webhooks/address.js"

export const FEED_TIMEOUT_MS = 10_000
export const MAX_FEED_BYTES = 5 * 1024 * 1024
export const MAX_REDIRECTS = 3

export interface FetchOptions {
  readonly allowPrivate: boolean
  /** Resolves hostnames when connecting, refusing non-public addresses unless allowed. */
  readonly lookup?: LookupFunction | undefined
  readonly timeoutMs?: number | undefined
  readonly maxBytes?: number | undefined
  readonly userAgent?: string | undefined
  /** Gives the request up (its sync was abandoned). */
  readonly signal?: AbortSignal | undefined
}

export interface FeedRequestHeaders {
  readonly etag: string | null
  readonly last_modified: string | null
}

export type FetchOutcome =
  | { readonly _tag: "Body"; readonly text: string; readonly etag: string | null; readonly last_modified: string | null }
  | { readonly _tag: "NotModified" }
  | { readonly _tag: "Failed"; readonly message: string }

const megabytes = (bytes: number) => `${Math.round((bytes / (1024 * 1024)) * 10) / 10} MB`

/** Words for a network failure that name no secret (the address's path never appears). */
const describe = (error: unknown): string => {
  const e = error as { readonly code?: unknown; readonly message?: unknown }
  switch (e?.code) {
    case "EBLOCKEDADDRESS":
      return String(e.message)
    case "ECONNREFUSED":
      return "the feed's server refused the connection"
    case "ECONNRESET":
      return "the feed's server closed the connection"
    case "ENOTFOUND":
      return "the feed's host was not found"
    case "EAI_AGAIN":
      return "the feed's host name could not be looked up (temporary)"
    case "EHOSTUNREACH":
    case "ENETUNREACH":
      return "the feed's server is unreachable"
    case "CERT_HAS_EXPIRED":
    case "DEPTH_ZERO_SELF_SIGNED_CERT":
    case "UNABLE_TO_VERIFY_LEAF_SIGNATURE":
    case "ERR_TLS_CERT_ALTNAME_INVALID":
      return `the feed's TLS certificate was refused (${String(e.code)})`
  }
  return typeof e?.code === "string" ? `the connection failed (${e.code})` : "the connection failed"
}

const header = (value: string | Array<string> | undefined): string | null => (Array.isArray(value) ? value[0] : value) ?? null

export const fetchFeed = (url: string, validators: FeedRequestHeaders, options: FetchOptions): Promise<FetchOutcome> =>
  new Promise<FetchOutcome>((resolve) => {
    const timeoutMs = options.timeoutMs ?? FEED_TIMEOUT_MS
    const maxBytes = options.maxBytes ?? MAX_FEED_BYTES
    let settled = false
    let current: http.ClientRequest | undefined
    const finish = (outcome: FetchOutcome) => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      options.signal?.removeEventListener("abort", abandon)
      current?.destroy()
      resolve(outcome)
    }
    const fail = (message: string) => finish({ _tag: "Failed", message })
    const timer = setTimeout(() => fail(`the feed did not answer within ${timeoutMs / 1000} s`), timeoutMs)
    const abandon = () => fail("the read was given up")
    if (options.signal?.aborted) return abandon()
    options.signal?.addEventListener("abort", abandon, { once: true })

    const get = (target: URL, redirects: number) => {
      if (target.protocol !== "http:" && target.protocol !== "https:") {
        return fail("the feed redirected to an address that is not http or https")
      }
      const blocked = options.allowPrivate ? undefined : literalHostBlockReason(target)
      if (blocked !== undefined) return fail(`refused to connect to ${target.hostname}: a ${blocked} address`)
      const headers: Record<string, string> = {
        accept: "text/calendar, */*;q=0.5",
        "accept-encoding": "gzip, deflate",
        "user-agent": options.userAgent ?? "Slotwise-Calendars/1.0"
      }
      if (validators.etag !== null) headers["if-none-match"] = validators.etag
      if (validators.last_modified !== null) headers["if-modified-since"] = validators.last_modified
      const secure = target.protocol === "https:"
      let request: http.ClientRequest
      try {
        request = (secure ? https : http).request(target, {
          method: "GET",
          headers,
          ...(options.lookup !== undefined ? { lookup: options.lookup } : {}),
          agent: false
        })
      } catch (error) {
        return fail(describe(error))
      }
      current = request
      request.on("error", (error) => fail(describe(error)))
      request.on("response", (response) => {
        const status = response.statusCode ?? 0
        if (status >= 300 && status < 400 && status !== 304) {
          response.resume()
          const location = header(response.headers.location)
          if (location === null) return fail(`the feed answered HTTP ${status} without a Location`)
          if (redirects >= MAX_REDIRECTS) return fail(`the feed redirected more than ${MAX_REDIRECTS} times`)
          if (!URL.canParse(location, target)) return fail("the feed redirected to an address that is not a URL")
          return get(new URL(location, target), redirects + 1)
        }
        if (status === 304) {
          response.resume()
          return finish({ _tag: "NotModified" })
        }
        if (status < 200 || status >= 300) {
          response.resume()
          return fail(`the feed answered HTTP ${status}`)
        }
        const declared = Number(header(response.headers["content-length"]) ?? Number.NaN)
        if (declared > maxBytes) return fail(`the feed is larger than ${megabytes(maxBytes)}`)
        const encoding = (header(response.headers["content-encoding"]) ?? "identity").toLowerCase()
        const body = encoding === "gzip" || encoding === "x-gzip"
          ? response.pipe(zlib.createGunzip())
          : encoding === "deflate"
          ? response.pipe(zlib.createInflate())
          : response
        const chunks: Array<Buffer> = []
        let bytes = 0
        body.on("data", (chunk: Buffer) => {
          bytes += chunk.length
          if (bytes > maxBytes) return fail(`the feed is larger than ${megabytes(maxBytes)}`)
          chunks.push(chunk)
        })
        body.on("error", () => fail("the feed's body could not be read (broken or badly compressed)"))
        response.on("error", (error) => fail(describe(error)))
        body.on("end", () =>
          finish({
            _tag: "Body",
            text: Buffer.concat(chunks).toString("utf8"),
            etag: header(response.headers.etag),
            last_modified: header(response.headers["last-modified"])
          }))
      })
      request.end()
    }

    try {
      get(new URL(url), 0)
    } catch {
      fail("the feed's address is not a URL")
    }
  })
