/**
 * `GET /favicon.ico`: a small icon (32×32, an ICO holding a PNG) for the hosted pages and
 * the API reference, on the server's own host and on every custom domain (browsers ask for
 * it at the root of whatever host they show). Answered by the server beside the API, without
 * the pipeline: no credential, not counted, cached for a day, revalidated by its ETag.
 */
import { createHash } from "node:crypto"
import type * as http from "node:http"

export const FAVICON_PATH = "/favicon.ico"

const ICON = Buffer.from(
  "AAABAAEAICAAAAEAIACVAAAAFgAAAIlQTkcNChoKAAAADUlIRFIAAAAgAAAAIAgGAAAAc3p69AAAAFxJREFUeNpjYMAB/N2e/qcmZiAGUNtSkhxD" +
    "L8uxOoLelmM4YmQ7YKAshztiUDuAWmDUAUPXAaO5gFrBPOqAoeuA0VwwWhKOOmBk5ILRVvGgcMCAd80GRed0oLrnAMm1dlNv9aywAAAAAElFTkSuQmCC",
  "base64"
)
const ETAG = `"${createHash("sha256").update(ICON).digest("base64url").slice(0, 22)}"`
const HEADERS = {
  "content-type": "image/x-icon",
  "cache-control": "public, max-age=86400",
  etag: ETAG,
  "x-content-type-options": "nosniff"
}

/** Answers a request for the icon: GET and HEAD, 304 to a matching If-None-Match, 405 otherwise. */
export const serveFavicon = (req: http.IncomingMessage, res: http.ServerResponse): void => {
  if (req.method !== "GET" && req.method !== "HEAD") {
    res.writeHead(405, { allow: "GET, HEAD", "content-length": 0 }).end()
    return
  }
  if ((req.headers["if-none-match"] ?? "").split(",").some((tag) => tag.trim().replace(/^W\//, "") === ETAG)) {
    res.writeHead(304, HEADERS).end()
    return
  }
  res.writeHead(200, { ...HEADERS, "content-length": ICON.length })
  res.end(req.method === "HEAD" ? undefined : ICON)
}
