/**
 * OAuth clients and grants (docs/api.md §7). A client belongs to one environment of one account;
 * a confidential client has a secret (shown once, stored hashed), a public one proves
 * possession with PKCE alone. Redirect URIs are matched exactly; `http` only for loopback.
 * A grant (`grt_`) is what an account user authorized a client to do.
 */
import { Schema } from "effect"
import { Environment, Instant, Metadata, Name, optional, Timestamps } from "../domain/common.js"
import { Scope, SCOPES } from "../keys/apiKey.js"
import { Id } from "../domain/ids.js"

export const OAuthClientType = Schema.Literal("confidential", "public").annotations({ identifier: "OAuthClientType" })
export type OAuthClientType = typeof OAuthClientType.Type

const LOOPBACK = new Set(["127.0.0.1", "[::1]", "localhost"])

/** Why `uri` cannot be a redirect URI, or undefined when it can. */
export const redirectUriProblem = (uri: string): string | undefined => {
  let url: URL
  try {
    url = new URL(uri)
  } catch {
    return "must be an absolute URL"
  }
  if (url.hash !== "" || uri.includes("#")) return "must not have a fragment"
  if (url.username !== "" || url.password !== "") return "must not carry credentials"
  if (url.protocol === "https:") return undefined
  if (url.protocol === "http:") return LOOPBACK.has(url.hostname) ? undefined : "must use https (http only for loopback hosts)"
  // Native apps' private-use schemes (RFC 8252 §7.1) name a reverse domain: com.example.app:/cb
  return /^[a-z][a-z0-9+-]*(\.[a-z0-9+-]+)+:$/.test(url.protocol) ? undefined : "must use https, loopback http or a reverse-domain scheme"
}

export const RedirectUri = Schema.String.pipe(
  Schema.maxLength(2000),
  Schema.filter((s) => redirectUriProblem(s) ?? true),
  Schema.annotations({ identifier: "RedirectUri", description: "matched exactly; https, or http for 127.0.0.1, [::1] and localhost" })
)

const RedirectUris = Schema.Array(RedirectUri).pipe(
  Schema.minItems(1),
  Schema.maxItems(20),
  Schema.filter((s) => new Set(s).size === s.length || "must not repeat a URI")
)
const ClientScopes = Schema.Array(Scope).pipe(
  Schema.minItems(1),
  Schema.maxItems(SCOPES.length),
  Schema.filter((s) => new Set(s).size === s.length || "must not repeat a scope")
)

export const OAuthClient = Schema.Struct({
  id: Id("oauthClient"),
  object: Schema.Literal("oauth_client"),
  client_id: Id("oauthClient").annotations({ description: "the same as id: what the client sends as client_id" }),
  name: Name,
  type: OAuthClientType,
  environment: Environment,
  redirect_uris: RedirectUris,
  scopes: Schema.Array(Scope).annotations({ description: "the most a user can grant this client" }),
  secret_redacted: Schema.NullOr(Schema.String).annotations({
    description: "confidential clients: the secret's prefix and last four characters"
  }),
  secret_rotated_at: Schema.NullOr(Instant),
  metadata: Metadata,
  ...Timestamps
}).annotations({ identifier: "OAuthClient" })
export type OAuthClient = typeof OAuthClient.Type

export const OAuthClientWithSecret = Schema.Struct({
  ...OAuthClient.fields,
  client_secret: Schema.NullOr(Schema.String).annotations({ description: "confidential clients: shown once; store it now" })
}).annotations({ identifier: "OAuthClientWithSecret" })
export type OAuthClientWithSecret = typeof OAuthClientWithSecret.Type

export const OAuthClientCreate = Schema.Struct({
  name: Name,
  type: OAuthClientType,
  redirect_uris: RedirectUris,
  scopes: optional(ClientScopes),
  metadata: optional(Metadata)
}).annotations({ identifier: "OAuthClientCreate" })
export type OAuthClientCreate = typeof OAuthClientCreate.Type

export const OAuthClientUpdate = Schema.Struct({
  name: optional(Name),
  redirect_uris: optional(RedirectUris),
  scopes: optional(ClientScopes),
  metadata: optional(Metadata)
}).annotations({ identifier: "OAuthClientUpdate" })
export type OAuthClientUpdate = typeof OAuthClientUpdate.Type

export const OAuthGrant = Schema.Struct({
  id: Id("grant"),
  object: Schema.Literal("oauth_grant"),
  client_id: Id("oauthClient"),
  user_id: Id("user"),
  environment: Environment,
  scopes: Schema.Array(Scope),
  ...Timestamps
}).annotations({ identifier: "OAuthGrant" })
export type OAuthGrant = typeof OAuthGrant.Type

/** Every scope in words, for the consent page and the docs. */
export const SCOPE_DESCRIPTIONS: { readonly [S in Scope]: string } = {
  "bookings:read": "See your bookings",
  "bookings:write": "Create, change and cancel bookings",
  "clients:read": "See your clients and their contact details",
  "clients:write": "Add, change and delete clients",
  "services:read": "See your services",
  "services:write": "Add, change and delete services",
  "staff:read": "See your staff",
  "staff:write": "Add, change and delete staff",
  "availability:read": "See availability and open slots",
  "availability:write": "Change availability",
  "events:read": "Read the event feed (every change to your data)",
  "webhooks:read": "See your webhook subscriptions",
  "webhooks:write": "Add, change and delete webhook subscriptions",
  "keys:write": "Manage API keys and OAuth clients"
}
