/**
 * API keys (docs/api.md §2): secret keys (`sk_test_…`, `sk_live_…`) for servers and publishable
 * keys (`pk_test_…`, `pk_live_…`) for the booking widget. A key belongs to one environment
 * of one account; its secret is shown once and stored only as a SHA-256 hash.
 */
import { Schema } from "effect"
import { Environment, Instant, Metadata, Name, ObjectType, optional, Timestamps } from "../domain/common.js"
import { Id } from "../domain/ids.js"

export const SCOPES = [
  "bookings:read",
  "bookings:write",
  "clients:read",
  "clients:write",
  "services:read",
  "services:write",
  "staff:read",
  "staff:write",
  "availability:read",
  "availability:write",
  "events:read",
  "webhooks:read",
  "webhooks:write",
  "keys:write"
] as const
export const Scope = Schema.Literal(...SCOPES).annotations({ identifier: "Scope" })
export type Scope = typeof Scope.Type

/** What a publishable key can ever do: read services, staff and slots, hold and book. */
export const PUBLISHABLE_SCOPES: ReadonlyArray<Scope> = ["services:read", "staff:read", "availability:read", "bookings:write"]

export const KeyType = Schema.Literal("secret", "publishable")
export type KeyType = typeof KeyType.Type

/** Longest rotation grace period: 30 days. */
export const MAX_GRACE_PERIOD_SECONDS = 30 * 86_400
export const DEFAULT_GRACE_PERIOD_SECONDS = 86_400

export const ApiKey = Schema.Struct({
  id: Id("key"),
  object: ObjectType("api_key"),
  name: Name,
  type: KeyType.annotations({ description: "`secret` for servers, `publishable` for the booking widget in browsers" }),
  environment: Environment.annotations({ description: "the data the key works on: `sandbox` or `production`" }),
  scopes: Schema.Array(Scope).annotations({ description: "what the key may do" }),
  redacted: Schema.String.annotations({ description: "the secret's prefix and last four characters" }),
  expires_at: Schema.NullOr(Instant).annotations({ description: "when the key stops working; null = never" }),
  rotated_at: Schema.NullOr(Instant).annotations({ description: "when its secret last changed; null = never" }),
  previous_secret_expires_at: Schema.NullOr(Instant).annotations({
    description: "after a rotation: until when the previous secret keeps working"
  }),
  source_key_id: Schema.NullOr(Id("key")).annotations({ description: "the sandbox key this key was exchanged from" }),
  metadata: Metadata,
  ...Timestamps
}).annotations({ identifier: "ApiKey" })
export type ApiKey = typeof ApiKey.Type

/** A key with its secret: only in the response that creates, rotates or exchanges it. */
export const ApiKeyWithSecret = Schema.Struct({
  ...ApiKey.fields,
  secret: Schema.String.annotations({ description: "shown once; store it now" })
}).annotations({ identifier: "ApiKeyWithSecret" })
export type ApiKeyWithSecret = typeof ApiKeyWithSecret.Type

export const ApiKeyCreate = Schema.Struct({
  name: Name,
  type: KeyType.annotations({ description: "`secret` for servers, `publishable` for the booking widget in browsers" }),
  scopes: optional(
    Schema.Array(Scope).pipe(
      Schema.minItems(1),
      Schema.maxItems(SCOPES.length),
      Schema.filter((s) => new Set(s).size === s.length || "must not repeat a scope", { jsonSchema: { uniqueItems: true } })
    ).annotations({ description: "what the key may do, each scope once; default: every scope its type allows" })
  ),
  expires_at: optional(Schema.NullOr(Instant).annotations({ description: "when the key stops working; null = never" })),
  metadata: optional(Metadata)
}).annotations({ identifier: "ApiKeyCreate" })
export type ApiKeyCreate = typeof ApiKeyCreate.Type

export const ApiKeyRotate = Schema.Struct({
  grace_period_seconds: optional(
    Schema.Int.pipe(Schema.between(0, MAX_GRACE_PERIOD_SECONDS, {
      message: () => `must be a whole number of seconds from 0 to ${MAX_GRACE_PERIOD_SECONDS}`
    })).annotations({ description: "how long the previous secret keeps working (default 86400; 0 = revoke it now)" })
  )
}).annotations({ identifier: "ApiKeyRotate" })
export type ApiKeyRotate = typeof ApiKeyRotate.Type

export const secretPrefix = (type: KeyType, environment: Environment): string =>
  `${type === "secret" ? "sk" : "pk"}_${environment === "production" ? "live" : "test"}_`

/**
 * Whether a presented credential is meant as an API key (`sk_`/`pk_`), well formed or not: a
 * mistyped or truncated key is refused as an API key, never taken for an OAuth access token.
 */
export const looksLikeApiKey = (token: string): boolean => /^(sk|pk)_/.test(token)

/** Which type and environment a presented credential claims, from its prefix alone. */
export const parseSecretPrefix = (secret: string): { readonly type: KeyType; readonly environment: Environment } | undefined => {
  const m = /^(sk|pk)_(test|live)_[0-9A-Za-z]{24,64}$/.exec(secret)
  if (m === null) return undefined
  return { type: m[1] === "sk" ? "secret" : "publishable", environment: m[2] === "live" ? "production" : "sandbox" }
}
