/**
 * The OpenAPI document at `/v1/openapi.json`, made from the API on its first request (not at
 * start: it takes ~30 ms) and kept. The `/docs` reference page: a small HTML page that loads Scalar from `/docs/scalar.js`
 * and the document from `/v1/openapi.json`, both served here, so it works offline. The
 * 3.4 MB script is read on its first request (from @effect/platform's bundled copy), not at
 * start, and is cached by browsers (ETag, Cache-Control). The page allows scripts from this
 * origin only (no inline script) and may not be framed.
 */
import { HttpApi, HttpApiBuilder, HttpServerRequest, HttpServerResponse, OpenApi } from "@effect/platform"
import { Effect } from "effect"
import { createHash } from "node:crypto"
import { createRequire } from "node:module"
import { dirname, join } from "node:path"
import { VERSION } from "./api.js"

export const OPENAPI_PATH = "/v1/openapi.json"
export const DOCS_PATH = "/docs"
export const DOCS_SCRIPT_PATH = "/docs/scalar.js"

// Paths are relative to /docs so the page also works under a mount prefix.
const PAGE = `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8">
    <meta name="viewport" content="width=device-width, initial-scale=1">
    <title>Slotwise API ${VERSION}</title>
  </head>
  <body>
    <script id="api-reference" data-url="v1/openapi.json" data-configuration='{"withDefaultFonts":false}'></script>
    <script src="docs/scalar.js"></script>
  </body>
</html>
`

/**
 * Scalar injects its styles and fetches the document; nothing else is allowed. `style-src`
 * needs 'unsafe-inline' for the injected styles; scripts are same-origin only, and may compile
 * WebAssembly ('wasm-unsafe-eval': Scalar parses the document with it), never eval JS.
 */
const CSP = [
  "default-src 'none'",
  "script-src 'self' 'wasm-unsafe-eval'",
  "style-src 'self' 'unsafe-inline'",
  "connect-src 'self'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'"
].join("; ")

const SECURITY_HEADERS = {
  "content-security-policy": CSP,
  "x-frame-options": "DENY",
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer"
}

interface Script {
  readonly body: Uint8Array
  readonly etag: string
}

let script: Script | undefined

const loadScript = (): Script => {
  if (script === undefined) {
    // The standalone build ships inside @effect/platform as a string module.
    const require = createRequire(import.meta.url)
    const entry = require.resolve("@effect/platform/HttpApiScalar")
    const text = (require(join(dirname(entry), "internal", "httpApiScalar.js")) as { javascript: string }).javascript
    const body = new TextEncoder().encode(text)
    script = { body, etag: `"${createHash("sha256").update(body).digest("base64url").slice(0, 32)}"` }
  }
  return script
}

const matches = (ifNoneMatch: string | undefined, etag: string): boolean =>
  ifNoneMatch !== undefined && ifNoneMatch.split(",").some((tag) => {
    const t = tag.trim()
    return t === "*" || t === etag || t === `W/${etag}`
  })

const page = Effect.sync(() =>
  HttpServerResponse.text(PAGE, {
    contentType: "text/html; charset=utf-8",
    headers: { ...SECURITY_HEADERS, "cache-control": "no-cache" }
  })
)

const scriptResponse = Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) =>
  Effect.sync(() => {
    const { body, etag } = loadScript()
    const headers = { etag, "cache-control": "public, max-age=86400", "x-content-type-options": "nosniff" }
    return matches(request.headers["if-none-match"], etag)
      ? HttpServerResponse.empty({ status: 304, headers })
      : HttpServerResponse.uint8Array(body, { contentType: "text/javascript; charset=utf-8", headers })
  }))

/** The document, the page and its script on the API's router. */
export const DocsLive = HttpApiBuilder.Router.use((router) =>
  Effect.gen(function*() {
    const { api } = yield* HttpApi.Api
    let document: HttpServerResponse.HttpServerResponse | undefined
    yield* router.get(OPENAPI_PATH, Effect.sync(() => document ??= HttpServerResponse.unsafeJson(OpenApi.fromApi(api))))
    yield* router.get(DOCS_PATH, page)
    yield* router.get(DOCS_SCRIPT_PATH, scriptResponse)
  })
)
