/**
 * oidc-provider's storage adapter over the Storage port: every record of the authorization
 * server (codes, tokens, grants, sessions, interactions) in `ProviderRecordsCollection`,
 * keyed by a hash of its id, so any storage adapter keeps them and processes share them.
 * Clients are not stored here: `Client` lookups read the OAuth clients of the core.
 *
 * Refresh-token reuse grace: a refresh token consumed less than `refreshGraceSeconds` ago
 * reads as not yet consumed, so two refreshes racing with the same token both succeed;
 * after that, presenting it is reuse, and oidc-provider revokes the whole grant.
 */
import { Clock, Effect, Option, Runtime } from "effect"
import { SYSTEM_TENANT } from "../../src/auth/collections.js"
import { OAuthClients } from "../../src/oauth/OAuthClients.js"
import { OAuthGrants, parseScopes } from "../../src/oauth/OAuthGrants.js"
import { type ProviderRecord, ProviderRecordsCollection, recordKey } from "../../src/oauth/collections.js"
import { Storage } from "../../src/ports/storage.js"
import { Tenant } from "../../src/ports/tenant.js"

export interface AdapterOptions {
  readonly refreshGraceSeconds: number
}

type Payload = { [key: string]: unknown }

const withoutJti = ({ jti: _secret, ...rest }: Payload): Payload => rest

const PURGE_EVERY = 100
const PURGE_BATCH = 200

export const makeAdapterFactory = (options: AdapterOptions) =>
  Effect.gen(function*() {
    const runtime = yield* Effect.runtime<Storage | OAuthClients | OAuthGrants>()
    const storage = yield* Storage
    const clients = yield* OAuthClients
    const grants = yield* OAuthGrants
    const records = storage.collection(ProviderRecordsCollection)
    const run = Runtime.runPromise(runtime)
    const system = <A, E>(effect: Effect.Effect<A, E, Tenant>) => Effect.provideService(effect, Tenant, SYSTEM_TENANT)

    /**
     * Expired records are dropped when read; the rest, a batch every PURGE_EVERY writes, so
     * the collection does not grow with every token ever issued.
     */
    let writes = 0
    const purgeExpired = Effect.gen(function*() {
      const now = yield* Clock.currentTimeMillis
      const rows = yield* system(
        records.listIndexes({ where: [{ column: "expires_ms", op: "lt", value: now }], limit: PURGE_BATCH, columns: [], ordered: false })
      )
      for (const row of rows) yield* system(records.remove(row.id))
    })

    const clientMetadata = (clientId: string) =>
      Effect.map(clients.resolve(clientId), (found): Payload | undefined => {
        if (found === undefined) return undefined
        const { client } = found
        return {
          client_id: client.id,
          client_name: client.name,
          // The hash, never the secret: `compareClientSecret` is replaced to hash what is presented.
          ...(client.secret_hash !== null ? { client_secret: client.secret_hash } : {}),
          redirect_uris: [...client.redirect_uris],
          grant_types: ["authorization_code", "refresh_token"],
          response_types: ["code"],
          id_token_signed_response_alg: "ES256",
          token_endpoint_auth_method: client.type === "confidential" ? "client_secret_basic" : "none",
          scope: client.scopes.join(" "),
          "urn:slotwise:environment": client.environment
        }
      })

    const read = (model: string, key: Effect.Effect<string>): Promise<Payload | undefined> =>
      run(Effect.gen(function*() {
        const record = Option.getOrUndefined(yield* system(records.get(yield* key)))
        if (record === undefined || record.model !== model) return undefined
        const now = yield* Clock.currentTimeMillis
        if (record.expires_ms !== null && now >= record.expires_ms) {
          yield* system(records.remove(record.id))
          return undefined
        }
        // The provider changes what it loads in place; stored documents are read-only and
        // shared (src/ports/frozen.ts), so it gets a copy of its own.
        const payload = structuredClone(record.payload)
        if (record.consumed_ms === null) return payload
        if (model === "RefreshToken" && now - record.consumed_ms < options.refreshGraceSeconds * 1000) return payload
        return { ...payload, consumed: Math.floor(record.consumed_ms / 1000) }
      }))

    return class StorageAdapter {
      constructor(readonly model: string) {}

      upsert(id: string, payload: Payload, expiresIn?: number): Promise<void> {
        const model = this.model
        return run(Effect.gen(function*() {
          const now = yield* Clock.currentTimeMillis
          const key = yield* recordKey(model, id)
          const record: ProviderRecord = {
            id: key,
            model,
            grant_id: typeof payload.grantId === "string" ? payload.grantId : model === "Grant" ? id : null,
            client_id: typeof payload.clientId === "string" ? payload.clientId : null,
            uid_key: typeof payload.uid === "string" ? yield* recordKey(`${model}.uid`, payload.uid) : null,
            expires_ms: expiresIn === undefined ? null : now + expiresIn * 1000,
            consumed_ms: null,
            // The id of a token or code is the secret itself: kept only in the key's hash. A
            // copy: the provider goes on changing its own objects after saving them.
            payload: structuredClone(withoutJti(payload))
          }
          yield* storage.transaction(Effect.gen(function*() {
            const existing = yield* system(records.get(key))
            yield* system(Option.isSome(existing) ? records.update(record) : records.insert(record))
            if (model === "Grant" && typeof payload.clientId === "string" && typeof payload.accountId === "string") {
              const openid = payload.openid as { scope?: unknown } | undefined
              yield* grants.save({ id, client_id: payload.clientId, user_id: payload.accountId, scopes: parseScopes(openid?.scope) })
            }
          }))
          if (++writes % PURGE_EVERY === 0) yield* Effect.ignore(storage.transaction(purgeExpired))
        }))
      }

      find(id: string): Promise<Payload | undefined> {
        if (this.model === "Client") return run(clientMetadata(id))
        return read(this.model, recordKey(this.model, id)).then((payload) => (payload === undefined ? undefined : { ...payload, jti: id }))
      }

      findByUid(uid: string): Promise<Payload | undefined> {
        const model = this.model
        return run(Effect.gen(function*() {
          const uidKey = yield* recordKey(`${model}.uid`, uid)
          const rows = yield* system(records.list({ where: [{ column: "uid_key", op: "eq", value: uidKey }], limit: 1 }))
          return rows[0]?.id
        })).then((key) => (key === undefined ? undefined : read(model, Effect.succeed(key))))
      }

      findByUserCode(): Promise<undefined> {
        return Promise.resolve(undefined) // no device flow
      }

      consume(id: string): Promise<void> {
        const model = this.model
        return run(storage.transaction(Effect.gen(function*() {
          const record = Option.getOrUndefined(yield* system(records.get(yield* recordKey(model, id))))
          if (record === undefined || record.consumed_ms !== null) return
          yield* system(records.update({ ...record, consumed_ms: yield* Clock.currentTimeMillis }))
        })))
      }

      destroy(id: string): Promise<void> {
        const model = this.model
        return run(storage.transaction(Effect.gen(function*() {
          const record = Option.getOrUndefined(yield* system(records.get(yield* recordKey(model, id))))
          if (record === undefined) return
          yield* system(records.remove(record.id))
          if (model === "Grant" && record.client_id !== null) yield* grants.forget(id, record.client_id)
        })))
      }

      revokeByGrantId(grantId: string): Promise<void> {
        const model = this.model
        return run(storage.transaction(Effect.gen(function*() {
          const rows = yield* system(records.list({ where: [{ column: "grant_id", op: "eq", value: grantId }] }))
          for (const row of rows) if (row.model === model) yield* system(records.remove(row.id))
        })))
      }
    }
  })
