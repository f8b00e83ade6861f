/**
 * CORS for publishable keys in browsers. A preflight carries no credential, so it succeeds
 * for an origin that some account allows (403 otherwise); the real request is then checked
 * against its key's own account (`corsOrigin` in the core), and only then gets
 * `Access-Control-Allow-Origin`. Secret keys never get CORS headers.
 */
import { HttpServerResponse } from "@effect/platform"
import { Effect } from "effect"
import type { Accounts } from "../../../src/accounts/Accounts.js"
import { howToAllowOrigin } from "../../../src/auth/allowOrigin.js"
import { Forbidden, type StorageFailure } from "../../../src/domain/errors.js"

const EXPOSED = [
  "x-ratelimit-limit",
  "x-ratelimit-remaining",
  "x-ratelimit-reset",
  "ratelimit",
  "ratelimit-policy",
  "retry-after",
  "idempotent-replayed"
].join(", ")

/** Adds the headers of an allowed cross-origin response to `headers`. */
export const addCorsHeaders = (headers: Record<string, string>, origin: string): void => {
  headers["access-control-allow-origin"] = origin
  headers["access-control-expose-headers"] = EXPOSED
  headers["vary"] = "Origin"
}

export const isPreflight = (method: string, headers: Readonly<Record<string, string | undefined>>): boolean =>
  method === "OPTIONS" && headers["access-control-request-method"] !== undefined

/** The answer to a preflight from `origin` (allowed by some account, or some account's verified custom domain). */
export const preflight = (
  accounts: Accounts,
  origin: string | undefined,
  isCustomDomain: (origin: string) => Effect.Effect<boolean, StorageFailure> = () => Effect.succeed(false)
) =>
  Effect.flatMap(
    origin === undefined
      ? Effect.succeed(false)
      : Effect.flatMap(accounts.originAllowedAnywhere(origin), (listed) => listed ? Effect.succeed(true) : isCustomDomain(origin)),
    (allowed) =>
      allowed
        ? Effect.succeed(HttpServerResponse.empty({
          status: 204,
          headers: {
            "access-control-allow-origin": origin!,
            "access-control-allow-methods": "GET, POST, DELETE",
            "access-control-allow-headers": "authorization, content-type, idempotency-key",
            "access-control-max-age": "600",
            vary: "Origin"
          }
        }))
        : Effect.fail(
          new Forbidden({
            detail: origin === undefined
              ? "a preflight request needs an Origin header"
              : `${origin} is not an allowed origin of any account: ${howToAllowOrigin(origin)}`
          })
        )
  )
