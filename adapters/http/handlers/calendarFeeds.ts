import { HttpServerResponse } from "@effect/platform"
import { Effect } from "effect"
import { CalendarFeeds } from "../../../src/calendarFeeds/CalendarFeeds.js"
import { SlotwiseApi } from "../api.js"
import { handlerGroup } from "./group.js"

const write = { uninterruptible: true } as const

export const CalendarFeedsLive = handlerGroup(SlotwiseApi, "calendarFeeds", (handlers) =>
  Effect.gen(function*() {
    const feeds = yield* CalendarFeeds
    return handlers
      .handle("createForStaff", ({ path }) => feeds.create(path.id), write)
      .handle("getForStaff", ({ path }) => feeds.get(path.id))
      .handle("deleteForStaff", ({ path }) => feeds.delete(path.id), write)
      .handle("createForAccount", () => feeds.createForAccount(), write)
      .handle("getForAccount", () => feeds.getForAccount())
      .handle("deleteForAccount", () => feeds.deleteForAccount(), write)
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

export const CalendarLive = handlerGroup(SlotwiseApi, "calendar", (handlers) =>
  Effect.gen(function*() {
    const feeds = yield* CalendarFeeds
    return handlers.handleRaw("feed", ({ path, request }) => {
      const token = path.file.endsWith(".ics") ? path.file.slice(0, -".ics".length) : ""
      return Effect.map(feeds.render(token), ({ body, etag }) => {
        const headers = { ...FEED_HEADERS, etag }
        return matches(request.headers["if-none-match"], etag)
          ? HttpServerResponse.empty({ status: 304, headers })
          : HttpServerResponse.text(body, { status: 200, contentType: "text/calendar; charset=utf-8", headers })
      })
    })
  }))
