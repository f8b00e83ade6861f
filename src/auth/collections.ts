/**
 * Collections of the access layer: accounts and credentials live in a system tenant (they
 * are looked up before any tenant is known); keys and idempotency records in their tenant.
 */
import { type Account, NO_BRANDING } from "../accounts/account.js"
import type { ApiKey, KeyType } from "../keys/apiKey.js"
import type { Environment } from "../domain/common.js"
import type { CollectionSpec } from "../ports/storage.js"
import type { TenantId } from "../ports/tenant.js"

/** Where account-wide records live: not an account, never visible through the API. */
export const SYSTEM_TENANT: TenantId = { account_id: "_system", environment: "production" }

export const AccountsCollection: CollectionSpec<Account> = {
  name: "accounts",
  indexes: {},
  order: [],
  // `handle` has no constant default: Accounts gives each earlier account its own on start.
  addedFields: { branding: NO_BRANDING, reminders: [] }
}

export const ApiKeysCollection: CollectionSpec<ApiKey> = {
  name: "api_keys",
  indexes: { type: { type: "text", get: (k) => k.type } },
  order: []
}

/** One record per live secret, keyed by its SHA-256 (hex): authentication is one lookup. */
export interface Credential {
  /** SHA-256 of the secret, hex. */
  readonly id: string
  readonly key_id: string
  readonly account_id: string
  readonly environment: Environment
  readonly type: KeyType
  /** End of a rotation's grace period (epoch ms), or null while this is the current secret. */
  readonly grace_until_ms: number | null
  readonly created_at: string
}

export const CredentialsCollection: CollectionSpec<Credential> = {
  name: "credentials",
  indexes: { key_id: { type: "text", get: (c) => c.key_id } },
  order: []
}

export interface StoredResponse {
  readonly status: number
  readonly content_type: string | null
  /** The body as sent, except a top-level `secret`, which is never kept. */
  readonly body: string
  /** The response carried a secret: a repeat is told so instead of replaying it. */
  readonly secret_withheld?: boolean
}

/**
 * What a write transaction of an idempotent request committed, kept in that transaction: a
 * retry after an unknown outcome is given it instead of writing again. A result with a
 * top-level `secret` keeps only what it created; an Option, what it holds; one that is
 * otherwise not plain JSON, nothing.
 */
export type CommittedResult =
  | { readonly kept: "value"; readonly value?: unknown }
  | { readonly kept: "option"; readonly some: CommittedResult | null }
  | { readonly kept: "secret_withheld"; readonly object: string | null; readonly id: string | null }
  | { readonly kept: "nothing" }

/** An `Idempotency-Key` and what its first request did (docs/api.md §1 Idempotency). */
export interface IdempotencyRecord {
  /** SHA-256 of the key, hex. */
  readonly id: string
  readonly fingerprint: string
  readonly state: "in_flight" | "completed"
  readonly response: StoredResponse | null
  /** While in flight: what its write transactions committed, in order (absent: none). */
  readonly results?: ReadonlyArray<CommittedResult>
  /** While in flight: when the request is presumed dead (its process crashed). */
  readonly locked_until_ms: number
  readonly expires_ms: number
  readonly created_at: string
}

export const IdempotencyCollection: CollectionSpec<IdempotencyRecord> = {
  name: "idempotency_keys",
  indexes: { expires_ms: { type: "integer", get: (r) => r.expires_ms } },
  order: []
}
