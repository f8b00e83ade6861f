/**
 * OAuth clients (docs/api.md §7), per account and environment. A confidential client's secret is
 * shown once and stored as its SHA-256 (it has ~240 bits of randomness, so a fast hash is
 * enough, as for API keys); a public client has none and relies on PKCE.
 */
import { Effect, Option, Schema } from "effect"
import { SYSTEM_TENANT } from "../auth/collections.js"
import { constantTimeEqual, randomBase62, sha256Hex } from "../auth/crypto.js"
import { SCOPES } from "../keys/apiKey.js"
import { isWellFormedId } from "../domain/ids.js"
import { ValidationFailed } from "../domain/errors.js"
import { type OAuthClient, OAuthClientCreate, OAuthClientUpdate, type OAuthClientWithSecret } from "./oauthClient.js"
import { currentStamp, findOr404, listPage, newResource, PageParams } from "../internal/resources.js"
import { decodeInput } from "../domain/validation.js"
import { OAuthClientDirectory, OAuthClientsCollection, type StoredOAuthClient } from "./collections.js"
import { OAuthGrants } from "./OAuthGrants.js"
import { Storage } from "../ports/storage.js"
import { Tenant, type TenantId } from "../ports/tenant.js"

export const OAuthClientListParams = Schema.Struct(PageParams).annotations({ identifier: "OAuthClientListParams" })
export type OAuthClientListParams = typeof OAuthClientListParams.Encoded

export const CLIENT_SECRET_PREFIX = "ocs_"
const SECRET_LENGTH = 40

/** A client as the outside sees it: never the secret's hash. */
export const publicClient = ({ secret_hash: _h, ...client }: StoredOAuthClient): OAuthClient => client

export class OAuthClients extends Effect.Service<OAuthClients>()("slotwise/OAuthClients", {
  effect: Effect.gen(function*() {
    const storage = yield* Storage
    const grants = yield* OAuthGrants
    const clients = storage.collection(OAuthClientsCollection)
    const directory = storage.collection(OAuthClientDirectory)
    const system = <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.provideService(effect, Tenant, SYSTEM_TENANT)
    const find = findOr404(clients, "OAuth client")
    const decodeCreate = decodeInput(OAuthClientCreate)
    const decodeUpdate = decodeInput(OAuthClientUpdate)
    const decodeList = decodeInput(OAuthClientListParams)

    const newSecret = Effect.gen(function*() {
      const secret = CLIENT_SECRET_PREFIX + randomBase62(SECRET_LENGTH)
      return { secret, hash: yield* sha256Hex(secret), redacted: `${secret.slice(0, 8)}…${secret.slice(-4)}` }
    })

    const create = (input: typeof OAuthClientCreate.Encoded) =>
      Effect.gen(function*() {
        const fields = yield* decodeCreate(input)
        const tenant = yield* Tenant
        const secret = fields.type === "confidential" ? yield* newSecret : undefined
        const base = yield* newResource("oauthClient")
        const client: StoredOAuthClient = {
          ...base,
          object: "oauth_client",
          client_id: base.id,
          name: fields.name,
          type: fields.type,
          environment: tenant.environment,
          redirect_uris: fields.redirect_uris,
          scopes: fields.scopes ?? SCOPES,
          secret_redacted: secret?.redacted ?? null,
          secret_rotated_at: null,
          metadata: fields.metadata ?? {},
          secret_hash: secret?.hash ?? null
        }
        yield* storage.transaction(Effect.gen(function*() {
          yield* clients.insert(client)
          yield* system(directory.insert({ id: client.id, account_id: tenant.account_id, environment: tenant.environment }))
        }))
        return { ...publicClient(client), client_secret: secret?.secret ?? null } satisfies OAuthClientWithSecret
      })

    const list = (params: OAuthClientListParams = {}) =>
      Effect.gen(function*() {
        const { cursor, limit } = yield* decodeList(params)
        const page = yield* listPage(clients, { where: [], limit, cursor, filters: {} })
        return { ...page, data: page.data.map(publicClient) }
      })

    const get = (id: string) => Effect.map(find(id), publicClient)

    const update = (id: string, input: typeof OAuthClientUpdate.Encoded) =>
      Effect.gen(function*() {
        const patch = yield* decodeUpdate(input)
        return yield* storage.transaction(Effect.gen(function*() {
          const current = yield* find(id)
          const now = yield* currentStamp
          const next: StoredOAuthClient = { ...current, ...patch, updated_at: now.iso }
          yield* clients.update(next)
          // A grant or token never keeps a scope its client no longer has.
          if (patch.scopes !== undefined) yield* grants.narrowForClient(next.id, next.scopes)
          return publicClient(next)
        }))
      })

    /** A new secret at once (the old one stops working); public clients have none. */
    const rotateSecret = (id: string) =>
      storage.transaction(Effect.gen(function*() {
        const current = yield* find(id)
        if (current.type !== "confidential") {
          return yield* new ValidationFailed({
            detail: "a public client has no secret: it proves possession with PKCE",
            errors: [{ path: "type", message: "is public" }]
          })
        }
        const secret = yield* newSecret
        const now = yield* currentStamp
        const next: StoredOAuthClient = {
          ...current,
          secret_hash: secret.hash,
          secret_redacted: secret.redacted,
          secret_rotated_at: now.iso,
          updated_at: now.iso
        }
        yield* clients.update(next)
        return { ...publicClient(next), client_secret: secret.secret } satisfies OAuthClientWithSecret
      }))

    /** Deletes the client with every grant and token it holds; returns it as it was. */
    const remove = (id: string) =>
      storage.transaction(Effect.gen(function*() {
        const client = yield* find(id)
        yield* grants.revokeForClient(client.id)
        yield* clients.remove(client.id)
        yield* system(directory.remove(client.id))
        return publicClient(client)
      }))

    /** A client by its client_id whatever its tenant (the authorization server's lookup). */
    const resolve = (clientId: string) =>
      Effect.gen(function*() {
        // A client_id from the outside that is no id names no client: never looked up.
        if (!isWellFormedId(clientId)) return undefined
        const entry = Option.getOrUndefined(yield* system(directory.get(clientId)))
        if (entry === undefined) return undefined
        const tenant: TenantId = { account_id: entry.account_id, environment: entry.environment }
        const client = Option.getOrUndefined(yield* Effect.provideService(clients.get(clientId), Tenant, tenant))
        return client === undefined ? undefined : { tenant, client }
      })

    /** Whether `secret` is the client's current secret (constant time over the hashes). */
    const verifySecret = (client: StoredOAuthClient, secret: string) =>
      client.secret_hash === null
        ? Effect.succeed(false)
        : Effect.map(sha256Hex(secret), (hash) => constantTimeEqual(hash, client.secret_hash!))

    return { create, list, get, update, rotateSecret, remove, resolve, verifySecret } as const
  })
}) {}
