/**
 * Custom domains in the core: the lookup the hosted pages and the request pipeline use
 * (`accountForHost`), its cache's bounded lifetime across instances that share storage but
 * not signals, the origin rule for publishable keys, and the Promise facade.
 */
import { describe, expect, it } from "@effect/vitest"
import { Context, Effect, Either, Layer, Option, TestClock } from "effect"
import { MemoryStorageLive } from "../../adapters/memory/storage.js"
import { createScheduling } from "../../index.js"
import type { Principal } from "../../src/keys/ApiKeys.js"
import { corsOrigin, decideAccess } from "../../src/auth/access.js"
import { hostOfHeader } from "../../src/domains/domain.js"
import { Events } from "../../src/events/Events.js"
import { DEFAULT_DOMAIN_CACHE_TTL_MS, Domains, DomainSettings } from "../../src/domains/Domains.js"
import { DnsResolver } from "../../src/ports/dns.js"
import { type SignalTopic, Storage, type StorageService } from "../../src/ports/storage.js"
import { Tenant, type TenantId } from "../../src/ports/tenant.js"
import { startDnsResponder } from "../support/dns.js"

const owner: TenantId = { account_id: "acc_01J00000000000000000000001", environment: "production" }
const stranger: TenantId = { account_id: "acc_01J00000000000000000000002", environment: "production" }

/** A resolver that answers from a map (the UDP path is covered over HTTP). */
const records = new Map<string, ReadonlyArray<string>>()
const FakeDns = Layer.succeed(DnsResolver, { resolveTxt: (name) => Effect.succeed(records.get(name) ?? []) })

/** Two instances of the service over one storage: two server processes without signals. */
const twoInstancesOver = (signalled: boolean) =>
  Effect.gen(function*() {
    const built = yield* Layer.build(MemoryStorageLive)
    const storage = signalled ? Context.add(built, Storage, withSignals(Context.get(built, Storage))) : built
    const build = Effect.map(
      Layer.build(Domains.Default.pipe(Layer.provide(Layer.mergeAll(
        FakeDns,
        Layer.succeed(DomainSettings, { reservedHosts: ["api.example"] }),
        Events.Default
      )))).pipe(
        Effect.provide(storage)
      ),
      (context) => Context.get(context, Domains)
    )
    return { storage: Context.get(storage, Storage), a: yield* build, b: yield* build }
  })
const twoInstances = twoInstancesOver(false)

/** Signals delivered to every subscriber in this process, as PostgreSQL's are to every process. */
const withSignals = (storage: StorageService): StorageService => {
  const listeners = new Map<SignalTopic, Set<() => void>>()
  return {
    ...storage,
    signals: {
      publish: (topic) => storage.afterCommit(Effect.sync(() => listeners.get(topic)?.forEach((listener) => listener()))),
      subscribe: (topic, listener) => {
        const set = listeners.get(topic) ?? new Set()
        listeners.set(topic, set.add(listener))
        return () => set.delete(listener)
      }
    }
  }
}

const as = (tenant: TenantId) => <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.provideService(effect, Tenant, tenant)

const verifyHost = (domains: Domains, tenant: TenantId, hostname: string) =>
  Effect.gen(function*() {
    const domain = yield* as(tenant)(domains.create({ hostname }))
    records.set(domain.verification.name, [domain.verification.value])
    return yield* as(tenant)(domains.verify(domain.id))
  })

describe("accountForHost", () => {
  it.scoped("resolves only verified hostnames, and a deletion on another instance within the cache's lifetime", () =>
    Effect.gen(function*() {
      const { a, b } = yield* twoInstances
      const pending = yield* as(owner)(a.create({ hostname: "pending.example" }))
      expect(yield* b.accountForHost("pending.example")).toEqual(Option.none())
      expect(yield* b.accountForHost("book.example")).toEqual(Option.none())

      const domain = yield* verifyHost(a, owner, "book.example")
      expect(domain.status).toBe("verified")
      // The instance that verified forgets at once; the other answers from its cache until it expires.
      expect(yield* a.accountForHost("book.example")).toEqual(Option.some(owner))
      expect(yield* b.accountForHost("book.example")).toEqual(Option.none())
      yield* TestClock.adjust(DEFAULT_DOMAIN_CACHE_TTL_MS)
      expect(yield* b.accountForHost("book.example")).toEqual(Option.some(owner))

      yield* as(owner)(a.delete(domain.id))
      expect(yield* a.accountForHost("book.example")).toEqual(Option.none())
      expect(yield* b.accountForHost("book.example")).toEqual(Option.some(owner))
      yield* TestClock.adjust(DEFAULT_DOMAIN_CACHE_TTL_MS)
      expect(yield* b.accountForHost("book.example")).toEqual(Option.none())
      expect(yield* b.tlsAllowed("book.example")).toBe(false)
      expect(pending.status).toBe("pending")
    }))

  it.scoped("ignores a hostname whose domain is gone (a sandbox reset) and lets another tenant claim it", () =>
    Effect.gen(function*() {
      const { a, storage } = yield* twoInstances
      yield* verifyHost(a, owner, "reset.example")
      yield* as(owner)(storage.eraseTenant)
      yield* TestClock.adjust(DEFAULT_DOMAIN_CACHE_TTL_MS)
      expect(yield* a.accountForHost("reset.example")).toEqual(Option.none())
      const claimed = yield* verifyHost(a, stranger, "reset.example")
      expect(claimed.status).toBe("verified")
      expect(yield* a.accountForHost("reset.example")).toEqual(Option.some(stranger))
    }))

  it.scoped("answers a tenant's verified domains, caching none until a verification here, a signal or the cache's lifetime", () =>
    Effect.gen(function*() {
      const { a, b } = yield* twoInstances
      expect(yield* a.verifiedDomainsOf(owner)).toEqual([])
      expect(yield* b.verifiedDomainsOf(owner)).toEqual([])
      const domain = yield* verifyHost(a, owner, "links.example")
      // The instance that verified forgets at once; the other keeps its "none" until it expires.
      expect(yield* a.verifiedDomainsOf(owner)).toEqual([domain])
      expect(yield* b.verifiedDomainsOf(owner)).toEqual([])
      yield* TestClock.adjust(DEFAULT_DOMAIN_CACHE_TTL_MS)
      expect(yield* b.verifiedDomainsOf(owner)).toEqual([domain])
      expect(yield* b.verifiedDomainsOf(stranger)).toEqual([])

      const signalled = yield* twoInstancesOver(true)
      expect(yield* signalled.b.verifiedDomainsOf(stranger)).toEqual([])
      const theirs = yield* verifyHost(signalled.a, stranger, "signalled.example")
      expect(yield* signalled.b.verifiedDomainsOf(stranger)).toEqual([theirs])
    }))

  it.scoped("refuses the server's own host and says which failure a lookup met", () =>
    Effect.gen(function*() {
      const { a } = yield* twoInstances
      const reserved = yield* Effect.either(as(owner)(a.create({ hostname: "api.example" })))
      expect(Either.isLeft(reserved) && reserved.left).toMatchObject({
        _tag: "ValidationFailed",
        errors: [{ path: "hostname", message: "is this server's own host" }]
      })
    }))

  it("reads a Host header as a hostname: port, case and trailing dot dropped; IP literals and junk are none", () => {
    expect(hostOfHeader("Book.Example.com:8443")).toBe("book.example.com")
    expect(hostOfHeader("book.example.com.")).toBe("book.example.com")
    for (const host of ["127.0.0.1:8080", "[::1]:80", "localhost", "", undefined, "a b.example"]) expect(hostOfHeader(host)).toBeUndefined()
  })
})

describe("the origin rule", () => {
  const principal = (tenant: TenantId) =>
    ({
      tenant,
      account: { id: tenant.account_id, allowed_origins: [] },
      key: { type: "publishable", scopes: ["services:read"] }
    }) as unknown as Principal
  const caller = { _tag: "Authenticated", principal: principal(owner) } as const
  const rule = { auth: "key", scope: "services:read", publishable: true } as const

  it("allows a publishable key from a verified domain's origin of its own tenant only", () => {
    expect(corsOrigin(caller, "https://book.example", owner)).toBe("https://book.example")
    expect(corsOrigin(caller, "https://book.example", stranger)).toBeUndefined()
    expect(corsOrigin(caller, "https://book.example", { ...owner, environment: "sandbox" })).toBeUndefined()
    expect(corsOrigin(caller, "https://book.example")).toBeUndefined()
    expect(decideAccess(rule, caller, "https://book.example", owner)._tag).toBe("Allowed")
    expect(decideAccess(rule, caller, "https://book.example", stranger)._tag).toBe("Denied")
  })
})

describe("the Promise facade", () => {
  it("creates, verifies against the configured resolver, lists and deletes domains", async () => {
    const dns = await startDnsResponder()
    const scheduling = await createScheduling({ dnsServer: dns.server })
    try {
      const domain = await scheduling.domains.create({ hostname: "book.facade.example" })
      await expect(scheduling.domains.verify(domain.id)).rejects.toMatchObject({ status: 422, code: "verification_failed" })
      dns.setTxt(domain.verification.name, [domain.verification.value])
      expect((await scheduling.domains.verify(domain.id)).status).toBe("verified")
      expect((await scheduling.domains.list()).data.map((d) => d.id)).toEqual([domain.id])
      expect((await scheduling.domains.get(domain.id)).hostname).toBe("book.facade.example")
      await scheduling.domains.delete(domain.id)
      await expect(scheduling.domains.get(domain.id)).rejects.toMatchObject({ status: 404 })
    } finally {
      await scheduling.close()
      await dns.close()
    }
  })
})
