/**
 * What account users authorized OAuth clients to do (docs/api.md §7), and turning an OAuth access
 * token presented on /v1 into the same `Principal` an API key gives: the user's account, the
 * client's environment, only the granted scopes, and a rate-limit counter of its own.
 *
 * The authorization server (adapters/oauth) keeps its records in `ProviderRecordsCollection`
 * and tells this service of every grant it saves or drops; revoking a grant here deletes
 * every record issued under it, so its tokens stop working at once.
 *
 * The account boundary: a grant joins a user and a client of one account, in the client's
 * environment. `tenantOfPair` is that rule; signing in, consent, code exchange, refresh,
 * saving a grant and every use of an access token go through it.
 */
import { Clock, Effect, Option, Schema } from "effect"
import type { Principal } from "../keys/ApiKeys.js"
import type { CredentialKind } from "../auth/Authenticator.js"
import { AccountsCollection, SYSTEM_TENANT } from "../auth/collections.js"
import { type Account, withLimits } from "../accounts/account.js"
import type { ApiKey, Scope } from "../keys/apiKey.js"
import { looksLikeApiKey, SCOPES } from "../keys/apiKey.js"
import { Forbidden, Unauthorized } from "../domain/errors.js"
import type { OAuthGrant } from "./oauthClient.js"
import { currentStamp, findOr404, listPage, PageParams } from "../internal/resources.js"
import { decodeInput } from "../domain/validation.js"
import {
  OAuthClientDirectory,
  OAuthClientsCollection,
  OAuthGrantsCollection,
  ProviderRecordsCollection,
  recordKey,
  UsersCollection
} from "./collections.js"
import { Storage } from "../ports/storage.js"
import { Tenant, type TenantId } from "../ports/tenant.js"

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
export const parseScopes = (scope: unknown): ReadonlyArray<Scope> => typeof scope === "string" ? scope.split(" ").filter(isScope) : []

/**
 * A server record's payload with its scopes kept to `keep` (a token's or code's `scope`, a
 * grant's `openid.scope`), or undefined when nothing changes.
 */
const narrowRecord = (
  payload: { readonly [key: string]: unknown },
  keep: (scopes: ReadonlyArray<string>) => ReadonlyArray<string>
): { readonly [key: string]: unknown } | undefined => {
  const narrow = (scope: unknown) => {
    if (typeof scope !== "string") return undefined
    const kept = keep(scope.split(" ")).join(" ")
    return kept === scope ? undefined : kept
  }
  const scope = narrow(payload.scope)
  const openid = payload.openid as { readonly scope?: unknown } | undefined
  const grantScope = narrow(openid?.scope)
  if (scope === undefined && grantScope === undefined) return undefined
  return {
    ...payload,
    ...(scope !== undefined ? { scope } : {}),
    ...(grantScope !== undefined ? { openid: { ...openid, scope: grantScope } } : {})
  }
}

export class OAuthGrants extends Effect.Service<OAuthGrants>()("slotwise/OAuthGrants", {
  effect: Effect.gen(function*() {
    const storage = yield* Storage
    const grants = storage.collection(OAuthGrantsCollection)
    const records = storage.collection(ProviderRecordsCollection)
    const directory = storage.collection(OAuthClientDirectory)
    const clients = storage.collection(OAuthClientsCollection)
    const accounts = storage.collection(AccountsCollection)
    const users = storage.collection(UsersCollection)
    const system = <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.provideService(effect, Tenant, SYSTEM_TENANT)
    const find = findOr404(grants, "OAuth grant")
    const decodeList = decodeInput(OAuthGrantListParams)

    const tenantOfClient = (clientId: string) =>
      Effect.map(system(directory.get(clientId)), Option.map((e): TenantId => ({ account_id: e.account_id, environment: e.environment })))

    const isUserOf = (userId: string, accountId: string) =>
      Effect.map(system(users.get(userId)), (user) => Option.isSome(user) && user.value.account_id === accountId)

    /** The client's tenant when the user belongs to the client's account; otherwise undefined. */
    const tenantOfPair = (userId: string, clientId: string) =>
      Effect.gen(function*() {
        const tenant = Option.getOrUndefined(yield* tenantOfClient(clientId))
        return tenant !== undefined && (yield* isUserOf(userId, tenant.account_id)) ? tenant : undefined
      })

    /** Deletes every server record issued under the grant (codes, tokens, the grant itself). */
    const dropRecords = (grantId: string) =>
      Effect.gen(function*() {
        const rows = yield* system(records.list({ where: [{ column: "grant_id", op: "eq", value: grantId }] }))
        for (const row of rows) yield* system(records.remove(row.id))
      })

    /** Records (or updates) a grant the authorization server saved. */
    const save = (
      grant: { readonly id: string; readonly client_id: string; readonly user_id: string; readonly scopes: ReadonlyArray<Scope> }
    ) =>
      Effect.gen(function*() {
        const nowIso = (yield* currentStamp).iso
        if (Option.isNone(yield* tenantOfClient(grant.client_id))) return
        const tenant = yield* tenantOfPair(grant.user_id, grant.client_id)
        if (tenant === undefined) {
          return yield* new Forbidden({ detail: "a grant joins a user and a client of one account" })
        }
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
          grants.list({
            where: [{ column: "user_id", op: "eq", value: userId }, { column: "client_id", op: "eq", value: clientId }],
            limit: 1
          }),
          Tenant,
          tenant
        )
        return rows[0]
      })

    /** The principal an OAuth access token stands for, or `unauthorized`. */
    const authenticate = (token: string) =>
      Effect.gen(function*() {
        const record = Option.getOrUndefined(yield* system(records.get(yield* recordKey("AccessToken", token))))
        if (record === undefined || record.model !== "AccessToken")
          return yield* unauthorized("the access token is unknown, expired or revoked")
        const now = yield* Clock.currentTimeMillis
        const payload = record.payload as AccessTokenPayload
        const exp = typeof payload.exp === "number" ? payload.exp * 1000 : record.expires_ms
        if (exp === null || exp === undefined || now >= exp)
          return yield* unauthorized("the access token has expired")
        if (typeof payload.clientId !== "string" || typeof payload.grantId !== "string") {
          return yield* unauthorized("the access token is unknown, expired or revoked")
        }
        const tenant = Option.getOrUndefined(yield* tenantOfClient(payload.clientId))
        if (tenant === undefined) return yield* unauthorized("the access token's client no longer exists")
        const client = Option.getOrUndefined(yield* Effect.provideService(clients.get(payload.clientId), Tenant, tenant))
        const account: Account | undefined = Option.getOrUndefined(yield* system(accounts.get(tenant.account_id)))
        if (client === undefined || account === undefined) return yield* unauthorized("the access token's client no longer exists")
        // The token stands only for a grant of this client's tenant given by a user of its account.
        const grant = Option.getOrUndefined(yield* Effect.provideService(grants.get(payload.grantId), Tenant, tenant))
        if (
          grant === undefined || grant.client_id !== payload.clientId || grant.user_id !== payload.accountId ||
          !(yield* isUserOf(grant.user_id, tenant.account_id))
        ) {
          return yield* unauthorized("the access token is unknown, expired or revoked")
        }
        // The token as a credential: the pipeline's access rules (scopes, secret-only
        // endpoints) and rate limits apply to it exactly as to a secret key.
        const key: ApiKey = {
          id: payload.grantId,
          object: "api_key",
          name: client.name,
          type: "secret",
          environment: tenant.environment,
          // Never more than the grant and the client allow now (both may have been narrowed).
          scopes: parseScopes(payload.scope).filter((s) => grant.scopes.includes(s) && client.scopes.includes(s)),
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

    /**
     * Narrows every grant of a client, and every code and token issued under them, to the
     * scopes the client keeps (its scopes were narrowed); in the client's tenant.
     */
    const narrowForClient = (clientId: string, allowed: ReadonlyArray<Scope>) =>
      Effect.gen(function*() {
        const keep = (scopes: ReadonlyArray<string>) => scopes.filter((s) => (allowed as ReadonlyArray<string>).includes(s))
        const nowIso = (yield* currentStamp).iso
        for (const grant of yield* grants.list({ where: [{ column: "client_id", op: "eq", value: clientId }] })) {
          if (grant.scopes.some((s) => !allowed.includes(s))) {
            yield* grants.update({ ...grant, scopes: keep(grant.scopes) as ReadonlyArray<Scope>, updated_at: nowIso })
          }
        }
        for (const record of yield* system(records.list({ where: [{ column: "client_id", op: "eq", value: clientId }] }))) {
          const narrowed = narrowRecord(record.payload, keep)
          if (narrowed !== undefined) yield* system(records.update({ ...record, payload: narrowed }))
        }
      })

    return {
      save,
      forget,
      list,
      get: find,
      revoke,
      revokeForClient,
      revokeForUser,
      existing,
      authenticate,
      dropRecords,
      tenantOfPair,
      narrowForClient
    } as const
  })
}) {}

/** OAuth access tokens as a credential kind: any bearer that is not an API key's form. */
export const oauthAccessTokenCredentials: Effect.Effect<CredentialKind, never, OAuthGrants> = Effect.map(
  OAuthGrants,
  (grants) => ({
    name: "an OAuth access token",
    recognizes: (token) => !looksLikeApiKey(token) && token.length > 0,
    authenticate: grants.authenticate
  })
)
