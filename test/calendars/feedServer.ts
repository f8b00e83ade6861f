/**
 * A calendar feed server on 127.0.0.1 for tests: each path answers what the test sets
 * (a body with an ETag, a status, silence, an endless body, a redirect), honours
 * `If-None-Match`, and counts the requests it gets.
 */
import * as http from "node:http"
import type { AddressInfo } from "node:net"

export type FeedAnswer =
  | { readonly kind: "ics"; readonly body: string; readonly etag?: string; readonly delayMs?: number }
  | { readonly kind: "status"; readonly status: number; readonly body?: string }
  | { readonly kind: "silent" }
  | { readonly kind: "stream"; readonly bytes: number }
  | { readonly kind: "redirect"; readonly to: string }

export interface FeedServer {
  readonly url: (path: string) => string
  readonly set: (path: string, answer: FeedAnswer) => void
  /** Requests per path, with the conditional headers they carried. */
  readonly requests: (path: string) => ReadonlyArray<{ readonly ifNoneMatch: string | undefined }>
  /** The most requests of a path that were being answered at one time. */
  readonly mostAtOnce: (path: string) => number
  readonly close: () => Promise<void>
}

export const startFeedServer = async (): Promise<FeedServer> => {
  const answers = new Map<string, FeedAnswer>()
  const seen = new Map<string, Array<{ ifNoneMatch: string | undefined }>>()
  const open = new Map<string, number>()
  const most = new Map<string, number>()
  const server = http.createServer((req, res) => {
    const path = (req.url ?? "/").split("?", 1)[0]!
    const log = seen.get(path) ?? []
    log.push({ ifNoneMatch: req.headers["if-none-match"] })
    seen.set(path, log)
    const answer = answers.get(path) ?? { kind: "status", status: 404 }
    open.set(path, (open.get(path) ?? 0) + 1)
    most.set(path, Math.max(most.get(path) ?? 0, open.get(path)!))
    res.on("close", () => open.set(path, open.get(path)! - 1))
    switch (answer.kind) {
      case "ics": {
        const reply = () => {
          if (answer.etag !== undefined && req.headers["if-none-match"] === answer.etag) {
            res.writeHead(304, { etag: answer.etag }).end()
            return
          }
          res.writeHead(200, { "content-type": "text/calendar; charset=utf-8", ...(answer.etag ? { etag: answer.etag } : {}) })
          res.end(answer.body)
        }
        if (answer.delayMs === undefined) reply()
        else setTimeout(reply, answer.delayMs)
        return
      }
      case "status":
        res.writeHead(answer.status, { "content-type": "text/plain" }).end(answer.body ?? "")
        return
      case "silent":
        return
      case "redirect":
        res.writeHead(302, { location: answer.to }).end()
        return
      case "stream": {
        // No Content-Length: the reader must count what arrives.
        res.writeHead(200, { "content-type": "text/calendar" })
        const chunk = Buffer.alloc(64 * 1024, "X")
        let sent = 0
        const pump = () => {
          while (sent < answer.bytes) {
            sent += chunk.length
            if (!res.write(chunk)) return void res.once("drain", pump)
          }
          res.end()
        }
        res.on("error", () => {})
        pump()
        return
      }
    }
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: (path) => `http://127.0.0.1:${port}${path}`,
    set: (path, answer) => void answers.set(path, answer),
    requests: (path) => seen.get(path) ?? [],
    mostAtOnce: (path) => most.get(path) ?? 0,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      })
  }
}
