/**
 * Serves the booking widget's bundle, `GET /widget.js`, built ahead of time by
 * `npm run build` (esbuild, widget/build.mjs) into `dist/widget.js`: never bundled
 * at request time. The file is read once and again only when its mtime changes, gzipped once,
 * and answered with an ETag and a five-minute public cache. It sits in front of the API
 * pipeline: a static asset needs no credential and is not counted against anyone's rate limit
 * (a revalidation is a 304 of a few bytes).
 */
import { type HttpApp, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { createHash } from "node:crypto"
import { readFileSync, statSync } from "node:fs"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { gzipSync } from "node:zlib"
import { Effect } from "effect"
import { withoutTrailingSlash } from "../../src/ports/trailingSlash.js"

export const WIDGET_PATH = "/widget.js"
export const WIDGET_BUNDLE = "widget.js"

/**
 * `dist/widget.js` of the package this module belongs to: found by walking up from here,
 * since the module runs from `adapters/http` (sources), `dist/adapters/http` (compiled) or
 * `dist/slotwise.mjs` (the bundled CLI).
 */
export const widgetBundlePath = (): string | undefined => {
  let dir = dirname(fileURLToPath(import.meta.url))
  for (let i = 0; i < 5; i++) {
    const candidate = join(dir, "dist", WIDGET_BUNDLE)
    if (statSync(candidate, { throwIfNoEntry: false })?.isFile()) return candidate
    const parent = dirname(dir)
    if (parent === dir) break
    dir = parent
  }
  return undefined
}

interface Asset {
  readonly path: string
  readonly mtimeMs: number
  readonly raw: Uint8Array
  readonly gzip: Uint8Array
  readonly etag: string
}

let cached: Asset | undefined

const load = (): Asset | undefined => {
  const path = cached?.path ?? widgetBundlePath()
  if (path === undefined) return undefined
  const stat = statSync(path, { throwIfNoEntry: false })
  if (stat === undefined) return (cached = undefined)
  if (cached !== undefined && cached.path === path && cached.mtimeMs === stat.mtimeMs) return cached
  const raw = readFileSync(path)
  const etag = `"${createHash("sha256").update(raw).digest("base64url").slice(0, 22)}"`
  cached = { path, mtimeMs: stat.mtimeMs, raw, gzip: gzipSync(raw, { level: 9 }), etag }
  return cached
}

const HEADERS = {
  "cache-control": "public, max-age=300",
  // Any page may load it, also with crossorigin/SRI or under COEP.
  "access-control-allow-origin": "*",
  "cross-origin-resource-policy": "cross-origin",
  "x-content-type-options": "nosniff",
  vary: "Accept-Encoding"
}

const respond = (request: HttpServerRequest.HttpServerRequest): HttpServerResponse.HttpServerResponse => {
  const asset = load()
  if (asset === undefined) {
    return HttpServerResponse.text("/* slotwise: the widget bundle is not built; run `npm run build` */\n", {
      status: 503,
      contentType: "text/javascript; charset=utf-8",
      headers: { "cache-control": "no-store" }
    })
  }
  const headers: Record<string, string> = { ...HEADERS, etag: asset.etag }
  const match = request.headers["if-none-match"]
  if (match !== undefined && match.split(",").some((tag) => tag.trim().replace(/^W\//, "") === asset.etag)) {
    return HttpServerResponse.empty({ status: 304, headers })
  }
  const gzip = /\bgzip\b/.test(request.headers["accept-encoding"] ?? "")
  if (gzip) headers["content-encoding"] = "gzip"
  const body = gzip ? asset.gzip : asset.raw
  return request.method === "HEAD"
    ? HttpServerResponse.empty({ status: 200, headers: { ...headers, "content-type": "text/javascript; charset=utf-8" } })
    : HttpServerResponse.uint8Array(body, { status: 200, contentType: "text/javascript; charset=utf-8", headers })
}

/**
 * A 401 answered to a browser calling with a `pk_` bearer is readable by the calling page
 * (`Access-Control-Allow-Origin` for its origin), so the widget can say "unknown or revoked
 * key" instead of a blind network error: there is no account whose origins could be checked,
 * and the problem says nothing a server-side caller could not learn with the same string.
 * Everything else keeps the pipeline's rule (CORS only for the account's allowed origins); a
 * refused origin is recognised by the widget itself (see widget/widget.ts `fail`).
 */
const readableRefusals = <E, R>(request: HttpServerRequest.HttpServerRequest, app: HttpApp.Default<E, R>): HttpApp.Default<E, R> => {
  const origin = request.headers.origin
  if (origin === undefined || !/^\s*bearer\s+pk_/i.test(request.headers.authorization ?? "")) return app
  return Effect.map(app, (response) =>
    response.status === 401
      ? HttpServerResponse.setHeaders(response, { "access-control-allow-origin": origin, vary: "Origin" })
      : response)
}

/**
 * Around the API app: answers `GET|HEAD {prefix}/widget.js` itself, makes key refusals readable
 * by the widget, and passes every other request on.
 */
export const withWidget = (prefix: string | undefined) => {
  const path = `${withoutTrailingSlash(prefix ?? "")}${WIDGET_PATH}`
  // One read of the request for both: each read is a step of every request's fiber.
  return <E, R>(app: HttpApp.Default<E, R>): HttpApp.Default<E, R> =>
    Effect.flatMap(
      HttpServerRequest.HttpServerRequest,
      (request) =>
        (request.method === "GET" || request.method === "HEAD") && request.url.split("?", 1)[0] === path
          ? Effect.sync(() => respond(request))
          : readableRefusals(request, app)
    )
}
