/**
 * What account users authorized OAuth clients to do (API.md §7), and turning an OAuth access
 * token presented on /v1 into the same `Principal` an API key gives: the user's account, the
 * client's environment, only the granted scopes, and a rate-limit counter of its own.
 *
 * The authorization server (adapters/oauth) keeps its records in `ProviderRecordsCollection`
 * and tells this service of every grant it saves or drops; revoking a grant here deletes
 * every record issued under it, so its tokens stop working at once.
 */
import { Clock, Effect, Option, Schema } from "effect"
import type { Principal } from "./ApiKeys.js"
import type { CredentialKind } from "./auth/Authenticator.js"
import { AccountsCollection, SYSTEM_TENANT } from "./auth/collections.js"
import { type Account, withLimits } from "./domain/account.js"
import type { ApiKey, Scope } from "./domain/apiKey.js"
import { parseSecretPrefix, SCOPES } from "./domain/apiKey.js"
import { Unauthorized } from "./domain/errors.js"
import type { OAuthGrant } from "./domain/oauthClient.js"
import { currentStamp, findOr404, listPage, PageParams } from "./internal/resources.js"
import { decodeInput } from "./internal/validation.js"
import {
  OAuthClientDirectory,
  OAuthClientsCollection,
  OAuthGrantsCollection,
  ProviderRecordsCollection,
  recordKey
} from "./oauth/collections.js"
import { Storage } from "./ports/storage.js"
import { Tenant, type TenantId } from "./ports/tenant.js"

export const OAuthGrantListParams = Schema.Struct(PageParams).annotations({ identifier: "OAuthGrantListParams" })
export type OAuthGrantListParams = typeof OAuthGrantListParams.Encoded

/** The authorization server's access-token fields this service reads. */
interface AccessTokenPayload {
  readonly clientId?: unknown
  readonly accountId?: unknown
  readonly grantId?: unknown
  readonly scope?: unknown
  readonly exp?: unknown
}

const unauthorized = (detail: string) => new Unauthorized({ detail })
const isScope = (s: string): s is Scope => (SCOPES as ReadonlyArray<string>).includes(s)

/** The scopes of a space-separated `scope` string that Slotwise knows. */
export const parseScopes = (scope: unknown): ReadonlyArray<Scope> =>
  typeof scope === "string" ? scope.split(" ").filter(isScope) : []

export class OAuthGrants extends Effect.Service<OAuthGrants>()("slotwise/OAuthGrants", {
  effect: Effect.gen(function*() {
    const storage = yield* Storage
    const grants = storage.collection(OAuthGrantsCollection)
    const records = storage.collection(ProviderRecordsCollection)
    const directory = storage.collection(OAuthClientDirectory)
    const clients = storage.collection(OAuthClientsCollection)
    const accounts = storage.collection(AccountsCollection)
    const system = <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.provideService(effect, Tenant, SYSTEM_TENANT)
    const find = findOr404(grants, "OAuth grant")
    const decodeList = decodeInput(OAuthGrantListParams)

    const tenantOfClient = (clientId: string) =>
      Effect.map(system(directory.get(clientId)), Option.map((e): TenantId => ({ account_id: e.account_id, environment: e.environment })))

    /** Deletes every server record issued under the grant (codes, tokens, the grant itself). */
    const dropRecords = (grantId: string) =>
      Effect.gen(function*() {
        const rows = yield* system(records.list({ where: [{ column: "grant_id", op: "eq", value: grantId }] }))
        for (const row of rows) yield* system(records.remove(row.id))
      })

    /** Records (or updates) a grant the authorization server saved. */
    const save = (grant: { readonly id: string; readonly client_id: string; readonly user_id: string; readonly scopes: ReadonlyArray<Scope> }) =>
      Effect.gen(function*() {
        const nowIso = (yield* currentStamp).iso
        const tenant = Option.getOrUndefined(yield* tenantOfClient(grant.client_id))
        if (tenant === undefined) return
        yield* Effect.provideService(
          Effect.gen(function*() {
            const existing = Option.getOrUndefined(yield* grants.get(grant.id))
            const doc: OAuthGrant = {
              id: grant.id,
              object: "oauth_grant",
              client_id: grant.client_id,
              user_id: grant.user_id,
              environment: tenant.environment,
              scopes: grant.scopes,
              created_at: existing?.created_at ?? nowIso,
              updated_at: nowIso
            }
            yield* existing === undefined ? grants.insert(doc) : grants.update(doc)
          }),
          Tenant,
          tenant
        )
      })

    /** Forgets a grant the authorization server dropped (its records are already gone). */
    const forget = (grantId: string, clientId: string) =>
      Effect.gen(function*() {
        const tenant = Option.getOrUndefined(yield* tenantOfClient(clientId))
        if (tenant !== undefined) yield* Effect.provideService(grants.remove(grantId), Tenant, tenant)
      })

    const list = (params: OAuthGrantListParams = {}) =>
      Effect.gen(function*() {
        const { cursor, limit } = yield* decodeList(params)
        return yield* listPage(grants, { where: [], limit, cursor, filters: {} })
      })

    /** Revokes the grant with every token issued under it; returns it as it was. */
    const revoke = (id: string) =>
      storage.transaction(Effect.gen(function*() {
        const grant = yield* find(id)
        yield* dropRecords(grant.id)
        yield* grants.remove(grant.id)
        return grant
      }))

    /** Revokes every grant of a client (the client is being deleted); in its tenant. */
    const revokeForClient = (clientId: string) =>
      Effect.gen(function*() {
        for (const grant of yield* grants.list({ where: [{ column: "client_id", op: "eq", value: clientId }] })) {
          yield* dropRecords(grant.id)
          yield* grants.remove(grant.id)
        }
        const rest = yield* system(records.list({ where: [{ column: "client_id", op: "eq", value: clientId }] }))
        for (const row of rest) yield* system(records.remove(row.id))
      })

    /** Revokes every grant of a user, in every environment (the user is being deleted). */
    const revokeForUser = (userId: string) =>
      Effect.gen(function*() {
        const rows = yield* grants.listAcrossTenants({ where: [{ column: "user_id", op: "eq", value: userId }] })
        for (const { doc, tenant } of rows) {
          yield* dropRecords(doc.id)
          yield* Effect.provideService(grants.remove(doc.id), Tenant, tenant)
        }
      })

    /** The grant a user already gave a client, if any (consent is remembered). */
    const existing = (userId: string, clientId: string) =>
      Effect.gen(function*() {
        const tenant = Option.getOrUndefined(yield* tenantOfClient(clientId))
        if (tenant === undefined) return undefined
        const rows = yield* Effect.provideService(
          grants.list({ where: [{ column: "user_id", op: "eq", value: userId }, { column: "client_id", op: "eq", value: clientId }], limit: 1 }),
          Tenant,
          tenant
        )
        return rows[0]
      })

    /** The principal an OAuth access token stands for, or `unauthorized`. */
    const authenticate = (token: string) =>
      Effect.gen(function*() {
        const record = Option.getOrUndefined(yield* system(records.get(yield* recordKey("AccessToken", token))))
        if (record === undefined || record.model !== "AccessToken") return yield* unauthorized("the access token is unknown, expired or revoked")
        const now = yield* Clock.currentTimeMillis
        const payload = record.payload as AccessTokenPayload
        const exp = typeof payload.exp === "number" ? payload.exp * 1000 : record.expires_ms
        if (exp === null || exp === undefined || now >= exp) return yield* unauthorized("the access token has expired")
        if (typeof payload.clientId !== "string" || typeof payload.grantId !== "string") {
          return yield* unauthorized("the access token is unknown, expired or revoked")
        }
        const tenant = Option.getOrUndefined(yield* tenantOfClient(payload.clientId))
        if (tenant === undefined) return yield* unauthorized("the access token's client no longer exists")
        const client = Option.getOrUndefined(yield* Effect.provideService(clients.get(payload.clientId), Tenant, tenant))
        const account: Account | undefined = Option.getOrUndefined(yield* system(accounts.get(tenant.account_id)))
        if (client === undefined || account === undefined) return yield* unauthorized("the access token's client no longer exists")
        // The token as a credential: the pipeline's access rules (scopes, secret-only
        // endpoints) and rate limits apply to it exactly as to a secret key.
        const key: ApiKey = {
          id: payload.grantId,
          object: "api_key",
          name: client.name,
          type: "secret",
          environment: tenant.environment,
          scopes: parseScopes(payload.scope),
          redacted: "oauth",
          expires_at: null,
          rotated_at: null,
          previous_secret_expires_at: null,
          source_key_id: null,
          metadata: {},
          created_at: client.created_at,
          updated_at: client.updated_at
        }
        return { tenant, account: withLimits(account), key } satisfies Principal
      })

    return { save, forget, list, get: find, revoke, revokeForClient, revokeForUser, existing, authenticate, dropRecords } as const
  })
}) {}

/** OAuth access tokens as a credential kind: any bearer that is not an API key's form. */
export const oauthAccessTokenCredentials: Effect.Effect<CredentialKind, never, OAuthGrants> = Effect.map(
  OAuthGrants,
  (grants) => ({
    name: "an OAuth access token",
    recognizes: (token) => parseSecretPrefix(token) === undefined && token.length > 0,
    authenticate: grants.authenticate
  })
)
