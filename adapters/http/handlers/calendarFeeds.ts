import { HttpApiBuilder, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Effect } from "effect"
import { CalendarFeeds } from "../../../src/CalendarFeeds.js"
import { SlotwiseApi } from "../api.js"
import { asTenant } from "./security.js"

const write = { uninterruptible: true } as const

/** The mount prefix the pipeline stripped from this request's path (`/scheduling`), or "". */
const mountPrefixOf = (request: HttpServerRequest.HttpServerRequest): string => {
  const original = new URL(request.originalUrl, "http://localhost").pathname
  const current = request.url.split("?", 1)[0]!
  return original.length > current.length && original.endsWith(current) ? original.slice(0, -current.length) : ""
}

/** Where this request reached the server (with its mount prefix), for feed URLs when no public URL is configured. */
const baseUrlOf = (request: HttpServerRequest.HttpServerRequest): string | undefined => {
  const host = request.headers.host
  if (host === undefined || !/^[A-Za-z0-9.:[\]-]{1,261}$/.test(host)) return undefined
  return `${request.headers["x-forwarded-proto"] === "https" ? "https" : "http"}://${host}${mountPrefixOf(request)}`
}

const requestBase = Effect.map(HttpServerRequest.HttpServerRequest, baseUrlOf)

export const CalendarFeedsLive = HttpApiBuilder.group(SlotwiseApi, "calendarFeeds", (handlers) =>
  Effect.gen(function*() {
    const feeds = yield* CalendarFeeds
    return handlers
      .handle("createForStaff", ({ path }) => Effect.flatMap(requestBase, (base) => asTenant(feeds.create(path.id, base))), write)
      .handle("getForStaff", ({ path }) => asTenant(feeds.get(path.id)))
      .handle("deleteForStaff", ({ path }) => asTenant(feeds.delete(path.id)), write)
      .handle("createForAccount", () => Effect.flatMap(requestBase, (base) => asTenant(feeds.createForAccount(base))), write)
      .handle("getForAccount", () => asTenant(feeds.getForAccount()))
      .handle("deleteForAccount", () => asTenant(feeds.deleteForAccount()), write)
  }))

const FEED_HEADERS = {
  "cache-control": "private, max-age=300",
  "x-content-type-options": "nosniff"
}

/** Whether an `If-None-Match` header names `etag` (or is `*`). */
const matches = (header: string | undefined, etag: string): boolean =>
  header !== undefined && header.split(",").some((tag) => {
    const trimmed = tag.trim()
    return trimmed === "*" || trimmed.replace(/^W\//, "") === etag
  })

export const CalendarLive = HttpApiBuilder.group(SlotwiseApi, "calendar", (handlers) =>
  Effect.gen(function*() {
    const feeds = yield* CalendarFeeds
    return handlers.handleRaw("feed", ({ path, request }) => {
      const token = path.file.endsWith(".ics") ? path.file.slice(0, -".ics".length) : ""
      const host = request.headers.host?.replace(/:\d+$/, "")
      return Effect.map(feeds.render(token, host), ({ body, etag }) => {
        const headers = { ...FEED_HEADERS, etag }
        return matches(request.headers["if-none-match"], etag)
          ? HttpServerResponse.empty({ status: 304, headers })
          : HttpServerResponse.text(body, { status: 200, contentType: "text/calendar; charset=utf-8", headers })
      })
    })
  }))
