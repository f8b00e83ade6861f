/**
 * What the authorization server reads of a request before oidc-provider does: its form
 * (bounded), its client credentials, and the parameters it refuses.
 */
import type { IncomingMessage } from "node:http"
import { containsNulOrLoneSurrogate } from "../../src/domain/validation.js"

/** The endpoints whose parameters are checked before oidc-provider (and storage) sees them. */
export const PROTOCOL_ENDPOINTS = new Set(["/oauth/authorize", "/oauth/token", "/oauth/revoke", "/oauth/introspect"])

/** An interaction page's path: its uid and the form's action, if any. */
export const INTERACTION = /^\/oauth\/interaction\/([A-Za-z0-9_-]{1,64})(?:\/(login|confirm|abort))?$/

const FORM_LIMIT = 56 * 1024

export const readForm = (req: IncomingMessage): Promise<URLSearchParams | undefined> =>
  new Promise((resolve) => {
    const type = req.headers["content-type"] ?? ""
    if (!type.startsWith("application/x-www-form-urlencoded")) return resolve(undefined)
    let size = 0
    const chunks: Array<Buffer> = []
    req.on("data", (chunk: Buffer) => {
      size += chunk.length
      if (size > 8192) {
        resolve(undefined)
        req.destroy()
      } else chunks.push(chunk)
    })
    req.on("end", () => resolve(new URLSearchParams(Buffer.concat(chunks).toString("utf8"))))
    req.on("error", () => resolve(undefined))
  })

/**
 * Reads a form body and hands it back to the request, so oidc-provider then reads the same
 * bytes as sent (it reads `req` through `iterator()` while `readable`). Undefined when the
 * body is too large; oidc-provider answers that itself.
 */
export const peekForm = async (req: IncomingMessage): Promise<URLSearchParams | undefined> => {
  const chunks: Array<Buffer> = []
  let size = 0
  for await (const chunk of req.iterator({ destroyOnReturn: false }) as AsyncIterable<Buffer>) {
    size += chunk.length
    if (size > FORM_LIMIT) return undefined
    chunks.push(chunk)
  }
  const body = Buffer.concat(chunks)
  Object.defineProperty(req, "readable", { value: true, configurable: true })
  Object.defineProperty(req, "iterator", {
    async *value() {
      yield body
    },
    configurable: true
  })
  return new URLSearchParams(body.toString("utf8"))
}

/** `client_id:secret` of an HTTP Basic authorization header, decoded, or "". */
export const basicCredentials = (header: string | undefined): string => {
  const m = /^basic\s+(\S+)$/i.exec(header ?? "")
  if (m === null) return ""
  const decoded = Buffer.from(m[1]!, "base64").toString("utf8")
  try {
    return decodeURIComponent(decoded)
  } catch {
    return decoded
  }
}

/**
 * What oidc-provider must not see: a NUL byte or an unpaired surrogate (the core's input
 * rule) in any parameter or in the client's credentials (storage refuses it), or a
 * response_mode other than the metadata's one.
 * The refusal names the parameter, never its value.
 */
export const refusalOf = (path: string, params: URLSearchParams, credentials: string): string | undefined => {
  for (const [name, value] of params) {
    if (containsNulOrLoneSurrogate(name) || containsNulOrLoneSurrogate(value)) {
      const which = /^[a-z_]{1,40}$/.test(name) ? `the ${name} parameter` : "a parameter"
      return `${which} contains a NUL byte or an unpaired surrogate`
    }
  }
  if (containsNulOrLoneSurrogate(credentials)) return "the client credentials contain a NUL byte or an unpaired surrogate"
  if (path === "/oauth/authorize" && params.getAll("response_mode").some((mode) => mode !== "query")) {
    return "response_mode must be query, the only response mode this server supports"
  }
  return undefined
}
