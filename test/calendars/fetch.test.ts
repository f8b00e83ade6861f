/**
 * The feed fetch's limits against a local server: the time limit, bytes counted as they
 * arrive, redirects (at most 3), compressed bodies, conditional requests, and the address
 * guard on a literal private address.
 */
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import { gzipSync } from "node:zlib"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { fetchFeed } from "../../adapters/calendars/fetch.js"
import { type FeedServer, startFeedServer } from "./feedServer.js"

const ICS = "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nEND:VCALENDAR\r\n"
const none = { etag: null, last_modified: null }
const open = { allowPrivate: true }

let feeds: FeedServer
beforeAll(async () => {
  feeds = await startFeedServer()
})
afterAll(() => feeds.close())

describe("fetchFeed", () => {
  it("gives up on a feed that does not answer within the time limit", async () => {
    feeds.set("/silent.ics", { kind: "silent" })
    const outcome = await fetchFeed(feeds.url("/silent.ics"), none, { ...open, timeoutMs: 200 })
    expect(outcome).toEqual({ _tag: "Failed", message: "the feed did not answer within 0.2 s" })
  })

  it("abandons a body beyond the limit as it arrives, without a Content-Length", async () => {
    feeds.set("/endless.ics", { kind: "stream", bytes: 64 * 1024 * 1024 })
    const outcome = await fetchFeed(feeds.url("/endless.ics"), none, { ...open, maxBytes: 256 * 1024 })
    expect(outcome).toEqual({ _tag: "Failed", message: "the feed is larger than 0.3 MB" })
  })

  it("follows up to 3 redirects and refuses a fourth", async () => {
    feeds.set("/final.ics", { kind: "ics", body: ICS, etag: "\"e1\"" })
    for (let i = 1; i <= 4; i++) feeds.set(`/hop${i}`, { kind: "redirect", to: i === 1 ? "/final.ics" : `/hop${i - 1}` })
    const three = await fetchFeed(feeds.url("/hop3"), none, open)
    expect(three).toEqual({ _tag: "Body", text: ICS, etag: "\"e1\"", last_modified: null })
    expect(await fetchFeed(feeds.url("/hop4"), none, open)).toEqual({ _tag: "Failed", message: "the feed redirected more than 3 times" })
  })

  it("sends the validators it has and reports 304 as unchanged", async () => {
    feeds.set("/cond.ics", { kind: "ics", body: ICS, etag: "\"v7\"" })
    expect(await fetchFeed(feeds.url("/cond.ics"), { etag: "\"v7\"", last_modified: null }, open)).toEqual({ _tag: "NotModified" })
    expect(feeds.requests("/cond.ics").at(-1)!.ifNoneMatch).toBe("\"v7\"")
  })

  it("refuses a literal loopback or private address unless allowed, before connecting", async () => {
    const before = feeds.requests("/final.ics").length
    const outcome = await fetchFeed(feeds.url("/final.ics"), none, { allowPrivate: false })
    expect(outcome).toEqual({ _tag: "Failed", message: "refused to connect to 127.0.0.1: a loopback address" })
    expect(feeds.requests("/final.ics").length).toBe(before)
    // Each redirect's target is checked like the first address: here a name whose lookup
    // stands in for a public resolution leads to a redirect to a private address.
    feeds.set("/to-private", { kind: "redirect", to: "http://10.1.2.3/cal.ics" })
    const publicLookup =
      ((_host: string, options: any, callback: any) =>
        options?.all ? callback(null, [{ address: "127.0.0.1", family: 4 }]) : callback(null, "127.0.0.1", 4)) as any
    const port = new URL(feeds.url("/")).port
    expect(await fetchFeed(`http://feeds.example:${port}/to-private`, none, { allowPrivate: false, lookup: publicLookup })).toEqual({
      _tag: "Failed",
      message: "refused to connect to 10.1.2.3: a private address"
    })
    expect(feeds.requests("/to-private").length).toBe(1)
  })

  it("reads a gzip-compressed feed", async () => {
    const server = http.createServer((_req, res) => {
      res.writeHead(200, { "content-type": "text/calendar", "content-encoding": "gzip" }).end(gzipSync(ICS))
    })
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
    try {
      const { port } = server.address() as AddressInfo
      const outcome = await fetchFeed(`http://127.0.0.1:${port}/`, none, open)
      expect(outcome).toMatchObject({ _tag: "Body", text: ICS })
    } finally {
      server.close()
    }
  })
})
