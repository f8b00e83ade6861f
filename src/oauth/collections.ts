/**
 * Collections of OAuth: users, clients and the grants users gave them, plus the
 * authorization server's own records (codes, tokens, sessions, interactions), all through
 * the Storage port, so every storage adapter keeps them and processes share them.
 *
 * Users, the client directory and the server's records live in the system tenant: they are
 * looked up before any tenant is known (sign-in by client, a token presented on /v1).
 */
import type { Environment } from "../domain/common.js"
import type { OAuthClient, OAuthGrant } from "./oauthClient.js"
import type { User } from "../users/user.js"
import { sha256Hex } from "../auth/crypto.js"
import type { CollectionSpec } from "../ports/storage.js"

export interface StoredUser extends User {
  /** `account_id` and the lower-cased email: unique. */
  readonly email_key: string
  /** The PasswordHasher's output (algorithm, parameters, salt and hash). */
  readonly password_hash: string
}

export const UsersCollection: CollectionSpec<StoredUser> = {
  name: "oauth_users",
  indexes: {
    account: { type: "text", get: (u) => u.account_id },
    email_key: { type: "text", get: (u) => u.email_key }
  },
  order: []
}

export interface StoredOAuthClient extends OAuthClient {
  /** SHA-256 (hex) of the client secret; null for public clients. */
  readonly secret_hash: string | null
}

export const OAuthClientsCollection: CollectionSpec<StoredOAuthClient> = {
  name: "oauth_clients",
  indexes: {},
  order: []
}

/** Where a client lives, by its id: the authorization server knows only the client_id. */
export interface OAuthClientEntry {
  readonly id: string
  readonly account_id: string
  readonly environment: Environment
}

export const OAuthClientDirectory: CollectionSpec<OAuthClientEntry> = {
  name: "oauth_client_directory",
  indexes: {},
  order: []
}

export const OAuthGrantsCollection: CollectionSpec<OAuthGrant> = {
  name: "oauth_grants",
  indexes: {
    client_id: { type: "text", get: (g) => g.client_id },
    user_id: { type: "text", get: (g) => g.user_id }
  },
  order: [],
  // Deleting a user revokes its grants in every tenant.
  acrossTenantIndexes: [["user_id"]]
}

/**
 * One record of the authorization server (an access token, a refresh token, a code, a
 * session, an interaction, a grant...). Its key is a hash of the model and the server's
 * id, so a stolen database holds no usable token; `payload` is the server's own document.
 */
export interface ProviderRecord {
  /** `recordKey(model, id)`. */
  readonly id: string
  readonly model: string
  readonly grant_id: string | null
  readonly client_id: string | null
  /** Hash of a session's uid, for lookups by uid. */
  readonly uid_key: string | null
  /** Epoch ms after which the record is gone; null = no expiry. */
  readonly expires_ms: number | null
  /** When a single-use record was consumed (epoch ms). */
  readonly consumed_ms: number | null
  readonly payload: { readonly [key: string]: unknown }
}

export const ProviderRecordsCollection: CollectionSpec<ProviderRecord> = {
  name: "oauth_records",
  indexes: {
    grant_id: { type: "text", get: (r) => r.grant_id },
    client_id: { type: "text", get: (r) => r.client_id },
    uid_key: { type: "text", get: (r) => r.uid_key },
    expires_ms: { type: "integer", get: (r) => r.expires_ms }
  },
  order: [],
  storageIndexes: [["grant_id"], ["client_id"], ["uid_key"]]
}

/** The key of a server record: SHA-256 of the model name and the id, hex. */
export const recordKey = (model: string, id: string) => sha256Hex(`${model}:${id}`)

/** Server-wide secrets shared by every process (the keys that sign the server's cookies). */
export interface ProviderSecret {
  readonly id: string
  readonly values: ReadonlyArray<string>
}

export const ProviderSecretsCollection: CollectionSpec<ProviderSecret> = {
  name: "oauth_secrets",
  indexes: {},
  order: []
}

export const OAuthCollections: ReadonlyArray<CollectionSpec<any>> = [
  UsersCollection,
  OAuthClientsCollection,
  OAuthClientDirectory,
  OAuthGrantsCollection,
  ProviderRecordsCollection,
  ProviderSecretsCollection
]
