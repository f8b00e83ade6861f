/**
 * API keys and authentication (docs/api.md §2): issuing, listing, rotating with a grace period,
 * revoking and exchanging keys, and turning a presented secret into the principal it stands
 * for. A secret is shown once and stored only as its SHA-256; a lookup is by that hash.
 */
import { Clock, Effect, Option, Schema } from "effect"
import { SYSTEM_TENANT, AccountsCollection, ApiKeysCollection, type Credential, CredentialsCollection } from "../auth/collections.js"
import { constantTimeEqual, randomBase62, sha256Hex } from "../auth/crypto.js"
import { type Account, withLimits } from "../accounts/account.js"
import {
  type ApiKey,
  ApiKeyCreate,
  ApiKeyRotate,
  type ApiKeyWithSecret,
  DEFAULT_GRACE_PERIOD_SECONDS,
  KeyType,
  looksLikeApiKey,
  parseSecretPrefix,
  PUBLISHABLE_SCOPES,
  type Scope,
  SCOPES,
  secretPrefix
} from "./apiKey.js"
import { formatInstant, optional, toMillis } from "../domain/common.js"
import { Forbidden, type StorageFailure, Unauthorized, ValidationFailed } from "../domain/errors.js"
import { currentStamp, findOr404, listPage, newResource, PageParams } from "../internal/resources.js"
import { decodeInput } from "../domain/validation.js"
import { type Condition, Storage } from "../ports/storage.js"
import { Tenant, type TenantId } from "../ports/tenant.js"

/** Who a request acts as: the account, the environment and the key presented. */
export interface Principal {
  readonly tenant: TenantId
  readonly account: Account
  readonly key: ApiKey
}

export const ApiKeyListParams = Schema.Struct({
  ...PageParams,
  type: optional(KeyType)
}).annotations({ identifier: "ApiKeyListParams" })
export type ApiKeyListParams = typeof ApiKeyListParams.Encoded

/** Characters of randomness after the prefix: 32 base62 characters ≈ 190 bits. */
const SECRET_LENGTH = 32
/**
 * How long a resolved credential is reused before it is read again. Revocation, rotation and
 * plan changes made in this process apply at once (the cache is cleared); made by another
 * process sharing the database, at once when storage signals it (PostgreSQL), else within
 * this time. Expiry is checked on every request.
 */
export const AUTH_CACHE_MS = 2_000
const AUTH_CACHE_MAX = 10_000

interface IssueFields {
  readonly name: string
  readonly type: KeyType
  readonly scopes: ReadonlyArray<Scope>
  readonly expires_at: string | null
  readonly metadata: ApiKey["metadata"]
  readonly source_key_id: string | null
}

const unauthorized = (detail: string) => new Unauthorized({ detail })

export class ApiKeys extends Effect.Service<ApiKeys>()("slotwise/ApiKeys", {
  effect: Effect.gen(function*() {
    const storage = yield* Storage
    const keys = storage.collection(ApiKeysCollection)
    const credentials = storage.collection(CredentialsCollection)
    const accounts = storage.collection(AccountsCollection)
    const find = findOr404(keys, "API key")
    const decodeCreate = decodeInput(ApiKeyCreate)
    const decodeRotate = decodeInput(ApiKeyRotate)
    const decodeList = decodeInput(ApiKeyListParams)
    const system = <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.provideService(effect, Tenant, SYSTEM_TENANT)

    const cache = new Map<string, Entry>()
    /** Hashes of secrets that authenticated recently (WebCrypto digests cost a promise each). */
    const hashes = new Map<string, string>()
    /** Bumped by every clear: a load that began before one must not refill the cache. */
    let generation = 0
    const clear = () => {
      generation++
      cache.clear()
      hashes.clear()
    }
    // Other processes on the database revoke and rotate too: their signal clears this cache.
    storage.signals?.subscribe("credentials", clear)
    /** Clears now and again after the commit (a read racing the write cannot linger), and tells other processes. */
    const invalidate = Effect.zipRight(
      Effect.zipRight(Effect.sync(clear), storage.afterCommit(Effect.sync(clear))),
      storage.signals?.publish("credentials") ?? Effect.void
    )

    const newSecret = (type: KeyType, tenant: TenantId) => secretPrefix(type, tenant.environment) + randomBase62(SECRET_LENGTH)
    const redact = (secret: string) => `${secret.slice(0, 8)}…${secret.slice(-4)}`

    const credentialOf = (secret: string, key: ApiKey, tenant: TenantId, createdAt: string) =>
      Effect.map(sha256Hex(secret), (hash): Credential => ({
        id: hash,
        key_id: key.id,
        account_id: tenant.account_id,
        environment: tenant.environment,
        type: key.type,
        grace_until_ms: null,
        created_at: createdAt
      }))

    /**
     * Creates a key in `tenant` and returns it with its secret (the only time it is seen).
     * `given` is a secret derived elsewhere (the hosted pages' key); else a random one.
     */
    const issue = (tenant: TenantId, fields: IssueFields, given?: string) =>
      storage.transaction(Effect.gen(function*() {
        const secret = given ?? newSecret(fields.type, tenant)
        const key: ApiKey = {
          ...(yield* newResource("key")),
          object: "api_key",
          name: fields.name,
          type: fields.type,
          environment: tenant.environment,
          scopes: fields.scopes,
          redacted: redact(secret),
          expires_at: fields.expires_at,
          rotated_at: null,
          previous_secret_expires_at: null,
          source_key_id: fields.source_key_id,
          metadata: fields.metadata
        }
        yield* Effect.provideService(keys.insert(key), Tenant, tenant)
        yield* system(credentials.insert(yield* credentialOf(secret, key, tenant, key.created_at)))
        return { ...key, secret } satisfies ApiKeyWithSecret
      }))

    const create = (input: typeof ApiKeyCreate.Encoded) =>
      Effect.gen(function*() {
        const fields = yield* decodeCreate(input)
        const tenant = yield* Tenant
        const now = yield* currentStamp
        const allowed = fields.type === "publishable" ? PUBLISHABLE_SCOPES : SCOPES
        const scopes = fields.scopes ?? allowed
        const foreign = scopes.flatMap((scope, i) => (allowed.includes(scope) ? [] : [i]))
        if (foreign.length > 0) {
          return yield* new ValidationFailed({
            detail: `a publishable key can only have the scopes ${PUBLISHABLE_SCOPES.join(", ")}`,
            errors: foreign.map((i) => ({ path: `scopes.${i}`, message: "is not allowed on a publishable key" }))
          })
        }
        if (fields.expires_at != null && toMillis(fields.expires_at) <= now.ms) {
          return yield* new ValidationFailed({
            detail: "expires_at must be in the future",
            errors: [{ path: "expires_at", message: "must be in the future" }]
          })
        }
        return yield* issue(tenant, {
          name: fields.name,
          type: fields.type,
          scopes,
          expires_at: fields.expires_at ?? null,
          metadata: fields.metadata ?? {},
          source_key_id: null
        })
      })

    const list = (params: ApiKeyListParams = {}) =>
      Effect.gen(function*() {
        const { cursor, limit, type } = yield* decodeList(params)
        const where: Array<Condition> = type === undefined ? [] : [{ column: "type", op: "eq", value: type }]
        return yield* listPage(keys, { where, limit, cursor, filters: { type } })
      })

    const credentialsOf = (keyId: string) => system(credentials.list({ where: [{ column: "key_id", op: "eq", value: keyId }] }))

    /**
     * A new secret for the key. The previous secret keeps working for the grace period
     * (default 86400 s); 0 revokes it at once. A secret already in grace keeps its own end.
     */
    const rotate = (id: string, input: typeof ApiKeyRotate.Encoded = {}) =>
      Effect.gen(function*() {
        const { grace_period_seconds = DEFAULT_GRACE_PERIOD_SECONDS } = yield* decodeRotate(input)
        const tenant = yield* Tenant
        return yield* storage.transaction(Effect.gen(function*() {
          const key = yield* find(id)
          const now = yield* currentStamp
          const graceUntil = now.ms + grace_period_seconds * 1000
          for (const old of yield* credentialsOf(key.id)) {
            if (grace_period_seconds === 0) yield* system(credentials.remove(old.id))
            else {
              const until = old.grace_until_ms === null ? graceUntil : Math.min(old.grace_until_ms, graceUntil)
              yield* system(credentials.update({ ...old, grace_until_ms: until }))
            }
          }
          const secret = newSecret(key.type, tenant)
          const next: ApiKey = {
            ...key,
            redacted: redact(secret),
            rotated_at: now.iso,
            previous_secret_expires_at: grace_period_seconds === 0 ? null : formatInstant(graceUntil),
            updated_at: now.iso
          }
          yield* keys.update(next)
          yield* system(credentials.insert(yield* credentialOf(secret, next, tenant, now.iso)))
          yield* invalidate
          return { ...next, secret } satisfies ApiKeyWithSecret
        }))
      })

    /** The account and environment a key belongs to, from its secrets (an operator names a key by id alone). */
    const tenantOf = (keyId: string) =>
      Effect.map(
        credentialsOf(keyId),
        (found): Option.Option<TenantId> =>
          found[0] === undefined ? Option.none() : Option.some({ account_id: found[0].account_id, environment: found[0].environment })
      )

    /** Revokes the key and every secret of it at once; returns the key as it was. */
    const revoke = (id: string) =>
      storage.transaction(Effect.gen(function*() {
        const key = yield* find(id)
        for (const old of yield* credentialsOf(key.id)) yield* system(credentials.remove(old.id))
        yield* keys.remove(key.id)
        yield* invalidate
        return key
      }))

    /**
     * Going live: with a sandbox secret key, issues the production secret key that matches
     * it (same name, scopes and metadata), so switching to production changes only the key.
     */
    const exchange = (keyId: string) =>
      Effect.gen(function*() {
        const tenant = yield* Tenant
        if (tenant.environment !== "sandbox") {
          return yield* new Forbidden({ detail: "exchange takes a sandbox secret key (sk_test_…)" })
        }
        const key = yield* find(keyId)
        if (key.type !== "secret") {
          return yield* new Forbidden({ detail: "exchange takes a sandbox secret key (sk_test_…), not a publishable key" })
        }
        return yield* issue({ account_id: tenant.account_id, environment: "production" }, {
          name: key.name,
          type: "secret",
          scopes: key.scopes,
          expires_at: null,
          metadata: key.metadata,
          source_key_id: key.id
        })
      })

    const load = (hash: string) =>
      Effect.gen(function*() {
        const credential = Option.getOrUndefined(yield* system(credentials.get(hash)))
        if (credential === undefined || !constantTimeEqual(credential.id, hash)) return undefined
        const tenant: TenantId = { account_id: credential.account_id, environment: credential.environment }
        const key = Option.getOrUndefined(yield* Effect.provideService(keys.get(credential.key_id), Tenant, tenant))
        const account = Option.getOrUndefined(yield* system(accounts.get(credential.account_id)))
        if (key === undefined || account === undefined) return undefined
        return { credential, principal: { tenant, account: withLimits(account), key } }
      })

    type Entry = { readonly credential: Credential; readonly principal: Principal; readonly at: number }
    const principalOf = ({ credential, principal }: Entry, now: number) => {
      if (credential.grace_until_ms !== null && now >= credential.grace_until_ms) {
        return Effect.fail(unauthorized("the API key was rotated and its previous secret has expired"))
      }
      if (principal.key.expires_at !== null && now >= toMillis(principal.key.expires_at)) {
        return Effect.fail(unauthorized(`the API key expired at ${principal.key.expires_at}`))
      }
      return Effect.succeed(principal)
    }
    const resolve = (secret: string, hash: string) =>
      Effect.flatMap(Clock.currentTimeMillis, (now) => {
        const cached = cache.get(hash)
        if (cached !== undefined && now - cached.at < AUTH_CACHE_MS && now >= cached.at) return principalOf(cached, now)
        const before = generation
        return Effect.flatMap(load(hash), (loaded) => {
          if (loaded === undefined) {
            cache.delete(hash)
            return Effect.fail(unauthorized("the API key is unknown or revoked"))
          }
          if (cache.size >= AUTH_CACHE_MAX) cache.clear()
          if (hashes.size >= AUTH_CACHE_MAX) hashes.clear()
          const entry = { ...loaded, at: now }
          // A clear (a revocation here or elsewhere) during the load: don't cache what it read.
          if (generation === before) {
            cache.set(hash, entry)
            hashes.set(secret, hash)
          }
          return principalOf(entry, now)
        })
      })

    /**
     * The principal a presented secret stands for, or `unauthorized`. Combinators rather
     * than a generator: a recently seen key (the usual request) costs a few steps.
     */
    const authenticate = (secret: string): Effect.Effect<Principal, Unauthorized | StorageFailure> =>
      Effect.suspend(() => {
        if (parseSecretPrefix(secret) === undefined) {
          return Effect.fail(unauthorized(
            looksLikeApiKey(secret)
              ? "the API key is not well formed (sk_test_, sk_live_, pk_test_ or pk_live_ followed by letters and digits): check that it was copied whole"
              : "the credential is not an API key (sk_test_…, sk_live_…, pk_test_…, pk_live_…)"
          ))
        }
        const known = hashes.get(secret)
        return known !== undefined ? resolve(secret, known) : Effect.flatMap(sha256Hex(secret), (hash) => resolve(secret, hash))
      })

    return { issue, create, list, get: find, rotate, revoke, tenantOf, exchange, authenticate, invalidate } as const
  })
}) {}
