/**
 * Custom domains (docs/api.md §10). A domain belongs to one account and environment, like
 * every resource; proving control with a TXT record at `_slotwise.<hostname>` makes it
 * `verified`, and only then does the hostname route to its tenant.
 *
 * Ownership. A hostname has one owner at a time: the verified domains of every tenant are
 * mirrored in one map keyed by hostname (a collection of its own tenant, so the storage's
 * primary key makes it unique, and its writes happen in the same transaction as the domain's).
 * Several tenants may hold a pending claim on one hostname (each gets its own record value);
 * whoever verifies first owns it, and the others' `verify` answers `domain_taken` until the
 * owner deletes its domain. A map entry counts only while its domain still exists, verified,
 * under its plan: a sandbox reset or a downgrade cannot leave a hostname stuck.
 *
 * Lookups (`accountForHost`, and a tenant having no verified domain for `verifiedDomainsOf`)
 * are cached in this process for a few seconds; a verification or
 * deletion clears this process's cache at once and, on storage that signals other processes
 * (PostgreSQL), theirs too. Without signals a deletion takes effect everywhere within the
 * cache's lifetime.
 */
import { Clock, Context, Effect, Option, Schema } from "effect"
import { AccountsCollection, SYSTEM_TENANT } from "../auth/collections.js"
import {
  customDomainOfOrigin,
  type Domain,
  DOMAIN_PLANS,
  DomainCreate,
  hostnameProblem,
  newVerificationValue,
  verificationName
} from "./domain.js"
import { DomainTaken, PlanRequired, type StorageFailure, VerificationFailed } from "../domain/errors.js"
import { Events } from "../events/Events.js"
import { currentStamp, findOr404, listPage, newResource, PageParams } from "../internal/resources.js"
import { decodeInput, validationFailed } from "../domain/validation.js"
import { DnsResolver } from "../ports/dns.js"
import type { CollectionSpec } from "../ports/storage.js"
import { Storage } from "../ports/storage.js"
import { Tenant, type TenantId } from "../ports/tenant.js"

export const DomainsCollection: CollectionSpec<Domain> = {
  name: "domains",
  indexes: { hostname: { type: "text", get: (d) => d.hostname } },
  order: []
}

/** A verified hostname and the tenant that owns it; the id is the hostname. */
export interface DomainOwner {
  readonly id: string
  readonly account_id: string
  readonly environment: TenantId["environment"]
  readonly domain_id: string
}

export const DomainOwnersCollection: CollectionSpec<DomainOwner> = {
  name: "domain_owners",
  indexes: {},
  order: []
}

/** The tenant of the hostname map: no account id starts with `_`. */
export const DOMAIN_OWNERS_TENANT: TenantId = { account_id: "_domains", environment: "production" }

/** How the server's deployment constrains domains; every field optional. */
export interface DomainSettingsService {
  /** Hostnames no account may claim: the server's own public host(s). */
  readonly reservedHosts?: ReadonlyArray<string> | undefined
  /** How long a lookup stays cached in this process (default 10 s). */
  readonly cacheTtlMs?: number | undefined
}

export class DomainSettings extends Context.Tag("slotwise/DomainSettings")<DomainSettings, DomainSettingsService>() {}

export const DEFAULT_DOMAIN_CACHE_TTL_MS = 10_000
/** Past this many cached hostnames the cache starts afresh (`Host` headers are the client's to choose). */
const MAX_CACHED = 10_000

const noDomains: ReadonlyArray<Domain> = []
const tenantKey = (tenant: TenantId) => `${tenant.account_id}/${tenant.environment}`
/** How many of the TXT values found a failed verification quotes, and how much of each. */
const QUOTED_VALUES = 5
const QUOTED_LENGTH = 100

export const DomainListParams = Schema.Struct({ ...PageParams }).annotations({ identifier: "DomainListParams" })
export type DomainListParams = typeof DomainListParams.Encoded

const sameTenant = (a: TenantId, b: TenantId): boolean => a.account_id === b.account_id && a.environment === b.environment

const quote = (value: string): string => JSON.stringify(value.length > QUOTED_LENGTH ? `${value.slice(0, QUOTED_LENGTH)}…` : value)

/** Why the TXT records found do not verify the domain, or `undefined` when one of them does. */
const verificationProblem = (domain: Domain, records: ReadonlyArray<string>): string | undefined => {
  const { name, value } = domain.verification
  if (records.includes(value)) return undefined
  if (records.length === 0) return `no TXT record found at ${name}; create one with the value ${value}`
  const shown = records.slice(0, QUOTED_VALUES).map(quote).join(", ")
  const more = records.length > QUOTED_VALUES ? ` and ${records.length - QUOTED_VALUES} more` : ""
  return `the TXT records at ${name} hold other values (${shown}${more}); expected ${value}`
}

export class Domains extends Effect.Service<Domains>()("slotwise/Domains", {
  scoped: Effect.gen(function*() {
    const storage = yield* Storage
    const events = yield* Events
    const resolver = yield* Effect.serviceOption(DnsResolver)
    const settings = Option.getOrElse(yield* Effect.serviceOption(DomainSettings), (): DomainSettingsService => ({}))
    const reserved = new Set((settings.reservedHosts ?? []).map((h) => h.toLowerCase()))
    const ttlMs = settings.cacheTtlMs ?? DEFAULT_DOMAIN_CACHE_TTL_MS
    const domains = storage.collection(DomainsCollection)
    const owners = storage.collection(DomainOwnersCollection)
    const accounts = storage.collection(AccountsCollection)
    const find = findOr404(domains, "domain")
    const decodeCreate = decodeInput(DomainCreate)
    const decodeList = decodeInput(DomainListParams)
    const asOwners = <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.provideService(effect, Tenant, DOMAIN_OWNERS_TENANT)

    // ---- the plan --------------------------------------------------------------------------

    /** Whether the account's plan has custom domains; an embedded instance has no account record and no plans. */
    const planAllows = (accountId: string) =>
      Effect.map(
        Effect.provideService(accounts.get(accountId), Tenant, SYSTEM_TENANT),
        Option.match({ onNone: () => true, onSome: (a) => (DOMAIN_PLANS as ReadonlyArray<string>).includes(a.plan) })
      )

    const requirePlan = Effect.gen(function*() {
      const tenant = yield* Tenant
      if (!(yield* planAllows(tenant.account_id))) {
        return yield* new PlanRequired({ detail: `custom domains need the ${DOMAIN_PLANS.join(" or ")} plan; this account is on free` })
      }
    })

    // ---- ownership -------------------------------------------------------------------------

    /** The hostname's owner, if its map entry is still backed by a verified domain under a plan that has domains. */
    const currentOwner = (hostname: string) =>
      Effect.gen(function*() {
        const entry = yield* asOwners(owners.get(hostname))
        if (Option.isNone(entry)) return undefined
        const tenant: TenantId = { account_id: entry.value.account_id, environment: entry.value.environment }
        const domain = yield* Effect.provideService(domains.get(entry.value.domain_id), Tenant, tenant)
        const live = Option.isSome(domain) && domain.value.status === "verified" && domain.value.hostname === hostname &&
          (yield* planAllows(tenant.account_id))
        return live ? { entry: entry.value, tenant } : undefined
      })

    const takenBy = (owner: TenantId, tenant: TenantId, hostname: string) =>
      new DomainTaken({
        detail: owner.account_id === tenant.account_id
          ? `${hostname} is verified in this account's ${owner.environment} environment; delete it there first`
          : `${hostname} is verified by another account`
      })

    // ---- the lookup cache ------------------------------------------------------------------

    const cache = new Map<string, { readonly tenant: TenantId | undefined; readonly expiresMs: number }>()
    // Tenants seen with no verified domain (most of them), until when: a manage link then costs
    // no read. Only a verification can make the answer wrong, and it clears this with `cache`.
    const unverified = new Map<string, number>()
    // Bumped on every clear, so a read that began before a verification never caches its answer.
    let generation = 0
    const clear = () => {
      cache.clear()
      unverified.clear()
      generation++
    }
    const forgetAll = Effect.sync(clear)
    const unsubscribe = storage.signals?.subscribe("domains", clear)
    if (unsubscribe !== undefined) yield* Effect.addFinalizer(() => Effect.sync(unsubscribe))
    /** After a commit that changed an owner: this process forgets at once, the others when signalled. */
    const announceChange = Effect.zipRight(storage.afterCommit(forgetAll), storage.signals?.publish("domains") ?? Effect.void)

    /**
     * The tenant whose verified custom domain `host` is (a bare, lower-case hostname, as
     * `hostOfHeader` gives), or none. What hosted pages call to find whose page to serve.
     */
    const accountForHost = (host: string): Effect.Effect<Option.Option<TenantId>, StorageFailure> =>
      Effect.gen(function*() {
        if (hostnameProblem(host) !== undefined) return Option.none()
        const now = yield* Clock.currentTimeMillis
        const cached = cache.get(host)
        if (cached !== undefined && cached.expiresMs > now) return Option.fromNullable(cached.tenant)
        const owner = yield* currentOwner(host)
        if (cache.size >= MAX_CACHED) cache.clear()
        cache.set(host, { tenant: owner?.tenant, expiresMs: now + ttlMs })
        return Option.fromNullable(owner?.tenant)
      })

    /**
     * `tenant`'s verified domains (what its manage links and hosted pages are based on). An
     * empty answer is cached as the hostname lookups are, and cleared with them.
     */
    const verifiedDomainsOf = (tenant: TenantId): Effect.Effect<ReadonlyArray<Domain>, StorageFailure> =>
      Effect.flatMap(Clock.currentTimeMillis, (now) => {
        const key = tenantKey(tenant)
        const until = unverified.get(key)
        if (until !== undefined && until > now) return Effect.succeed(noDomains)
        const before = generation
        return Effect.map(Effect.provideService(domains.list({}), Tenant, tenant), (all) => {
          const verified = all.filter((d) => d.status === "verified")
          if (verified.length === 0 && generation === before) {
            if (unverified.size >= MAX_CACHED) unverified.clear()
            unverified.set(key, now + ttlMs)
          }
          return verified
        })
      })

    /** The tenant whose verified custom domain a browser `Origin` (`https://<hostname>`) is, or none. */
    const tenantForOrigin = (origin: string) => {
      const hostname = customDomainOfOrigin(origin)
      return hostname === undefined ? Effect.succeedNone : accountForHost(hostname)
    }

    /** Whether a certificate may be issued for `hostname`: it is a verified domain (Caddy's on-demand TLS `ask`). */
    const tlsAllowed = (hostname: string) => Effect.map(accountForHost(hostname), Option.isSome)

    // ---- the resource ----------------------------------------------------------------------

    const create = (input: typeof DomainCreate.Encoded) =>
      Effect.gen(function*() {
        const { hostname } = yield* decodeCreate(input)
        if (reserved.has(hostname)) {
          return yield* validationFailed([{ path: "hostname", message: "is this server's own host" }])
        }
        yield* requirePlan
        const tenant = yield* Tenant
        return yield* storage.transaction(Effect.gen(function*() {
          const existing = yield* domains.list({ where: [{ column: "hostname", op: "eq", value: hostname }], limit: 1 })
          if (existing.length > 0) {
            return yield* new DomainTaken({ detail: `this environment already has ${hostname} as ${existing[0]!.id}` })
          }
          const owner = yield* currentOwner(hostname)
          if (owner !== undefined && !sameTenant(owner.tenant, tenant)) return yield* takenBy(owner.tenant, tenant, hostname)
          const domain: Domain = {
            ...(yield* newResource("domain")),
            object: "domain",
            hostname,
            status: "pending",
            verification: { type: "TXT", name: verificationName(hostname), value: newVerificationValue() },
            verified_at: null
          }
          yield* domains.insert(domain)
          yield* events.record("domain.created", domain)
          return domain
        }))
      })

    const get = (id: string) => find(id)

    const list = (params: DomainListParams = {}) =>
      Effect.gen(function*() {
        const { cursor, limit } = yield* decodeList(params)
        return yield* listPage(domains, { where: [], limit, cursor, filters: {} })
      })

    /** The TXT records at the domain's verification name, or a 422 saying why there are none to read. */
    const lookUp = (domain: Domain) =>
      Option.match(resolver, {
        onNone: () => Effect.fail(new VerificationFailed({ detail: "no DNS resolver is configured, so no record can be looked up" })),
        onSome: (dns) =>
          Effect.mapError(dns.resolveTxt(domain.verification.name), (failure) =>
            new VerificationFailed({
              detail: failure.reason === "timeout"
                ? `the DNS lookup of ${domain.verification.name} timed out (${failure.message}); try again`
                : `the DNS resolver failed to look up ${domain.verification.name} (${failure.message}); try again`
            }))
      })

    /**
     * Looks the TXT record up and, when it holds the domain's value, marks the domain verified
     * and makes its tenant the hostname's owner. A verified domain is returned as it is.
     */
    const verify = (id: string) =>
      Effect.gen(function*() {
        yield* requirePlan
        const tenant = yield* Tenant
        const before = yield* find(id)
        if (before.status === "verified") return before
        const problem = verificationProblem(before, yield* lookUp(before))
        if (problem !== undefined) return yield* new VerificationFailed({ detail: problem })
        return yield* storage.transaction(Effect.gen(function*() {
          const current = yield* find(id)
          if (current.status === "verified") return current
          const owner = yield* currentOwner(current.hostname)
          if (owner !== undefined && owner.entry.domain_id !== id) return yield* takenBy(owner.tenant, tenant, current.hostname)
          const now = yield* currentStamp
          const entry: DomainOwner = { id: current.hostname, ...tenant, domain_id: id }
          // A stale entry (its domain gone) is replaced; the hostname is the primary key either way.
          const stale = yield* asOwners(owners.get(current.hostname))
          yield* asOwners(Option.isSome(stale) ? owners.update(entry) : owners.insert(entry))
          const next: Domain = { ...current, status: "verified", verified_at: now.iso, updated_at: now.iso }
          yield* domains.update(next)
          yield* events.record("domain.verified", next, { previous: current })
          yield* announceChange
          return next
        }))
      })

    /** Deletes the domain; a verified one stops routing and frees its hostname for others. */
    const remove = (id: string) =>
      storage.transaction(Effect.gen(function*() {
        const tenant = yield* Tenant
        const current = yield* find(id)
        const entry = yield* asOwners(owners.get(current.hostname))
        if (Option.isSome(entry) && entry.value.domain_id === id && sameTenant(entry.value, tenant)) {
          yield* asOwners(owners.remove(current.hostname))
          yield* announceChange
        }
        yield* domains.remove(id)
        yield* events.record("domain.deleted", current)
        return current
      }))

    return { create, get, list, verify, delete: remove, accountForHost, tenantForOrigin, tlsAllowed, verifiedDomainsOf } as const
  })
}) {}
