/**
 * Authentication step: the `Authorization` header becomes a `Caller`. On operator routes
 * the bearer is compared with the operator's token; everywhere else it goes to the core's
 * `Authenticator`, which knows every credential kind (API keys, and whatever is composed
 * beside them), so this step never changes when a kind is added.
 */
import { Effect } from "effect"
import type { AccessRequirement, Caller } from "../../../src/auth/access.js"
import type { AuthenticatorService } from "../../../src/auth/Authenticator.js"
import { constantTimeEqual } from "../../../src/auth/crypto.js"
import type { StorageFailure } from "../../../src/domain/errors.js"
import { Unauthorized } from "../../../src/domain/errors.js"

const ANONYMOUS: Caller = { _tag: "Anonymous" }
const OPERATOR: Caller = { _tag: "Operator" }
const NOT_OPERATOR: Caller = { _tag: "Rejected", error: new Unauthorized({ detail: "operator token required" }) }

/** `Authorization: <scheme> <token>`, or the scheme alone when nothing follows it. */
export const parseAuthorization = (header: string): { readonly scheme: string; readonly token: string } => {
  const m = /^\s*(\S+)(?:\s+(.*?))?\s*$/.exec(header)
  return m === null ? { scheme: "", token: "" } : { scheme: m[1]!, token: m[2] ?? "" }
}

/**
 * The HTTP authentication schemes a 401 may name back (IANA's registry and a few in wide
 * use). Anything else in the scheme's place is most likely a credential sent without
 * `Bearer `, and a response never repeats a credential.
 */
const KNOWN_SCHEMES = new Set([
  "basic",
  "bearer",
  "concealed",
  "digest",
  "dpop",
  "gnap",
  "hoba",
  "mutual",
  "negotiate",
  "ntlm",
  "oauth",
  "privatetoken",
  "scram-sha-1",
  "scram-sha-256",
  "token",
  "vapid",
  "aws4-hmac-sha256"
])

/** The scheme of a header that is not a usable bearer, as a 401 may name it: "" when it is not a scheme. */
const nameableScheme = (header: string): string => {
  const { scheme } = parseAuthorization(header)
  return KNOWN_SCHEMES.has(scheme.toLowerCase()) ? scheme : ""
}

/** The bearer token of a header, when it is one and not empty. */
const bearerOf = (header: string): string | undefined => {
  const { scheme, token } = parseAuthorization(header)
  return scheme.length === 6 && scheme.toLowerCase() === "bearer" && token !== "" ? token : undefined
}

export const makeAuthenticate =
  (authenticator: AuthenticatorService, adminToken: string | undefined) =>
  (authorization: string | undefined, rule: AccessRequirement | undefined): Effect.Effect<Caller, StorageFailure> => {
    if (authorization === undefined) return Effect.succeed(ANONYMOUS)
    const token = bearerOf(authorization)
    if (rule?.auth === "admin") {
      return Effect.succeed(
        adminToken !== undefined && token !== undefined && constantTimeEqual(token, adminToken) ? OPERATOR : NOT_OPERATOR
      )
    }
    if (token === undefined) return Effect.succeed({ _tag: "Malformed", scheme: nameableScheme(authorization) })
    return authenticator.authenticate(token).pipe(
      Effect.map((principal): Caller => ({ _tag: "Authenticated", principal })),
      Effect.catchTag("Unauthorized", (error) => Effect.succeed<Caller>({ _tag: "Rejected", error }))
    )
  }

/** Whether the request presented a credential that was refused (for `WWW-Authenticate`'s `invalid_token`). */
export const presentedCredential = (caller: Caller): boolean => caller._tag === "Rejected" || caller._tag === "Authenticated"
