/**
 * Making and checking manage links: the deployment's MAC key (created once in storage for
 * every instance), the MAC port and the public base URL.
 */
import { Effect, Option } from "effect"
import { AccountsCollection, SYSTEM_TENANT } from "../auth/collections.js"
import { DOMAIN_OWNERS_TENANT, DomainOwnersCollection, DomainsCollection } from "../domains/Domains.js"
import { DOMAIN_PLANS, originOfCustomDomain } from "../domains/domain.js"
import type { Booking } from "../bookings/booking.js"
import type { Domain } from "../domains/domain.js"
import type { StorageFailure } from "../domain/errors.js"
import {
  type DeploymentSecret,
  formatToken,
  MAC_BYTES,
  MANAGE_LINK_SECRET_ID,
  type ManageLink,
  macMessage,
  manageVersionOf,
  SECRET_BYTES
} from "./manageLink.js"
import { currentStamp } from "../internal/resources.js"
import { DeploymentSecretsCollection } from "./collections.js"
import { base64url, fromBase64url, ManageLinkMac } from "../ports/manageLinks.js"
import { PublicUrl } from "../ports/publicUrl.js"
import { Storage } from "../ports/storage.js"
import { Tenant, type TenantId } from "../ports/tenant.js"

/** Link MACs remembered at most (about 200 bytes each); past it the memory starts again empty. */
const MAX_SIGNATURES = 10_000

/**
 * `verifiedDomainsOf` answers which verified domains a tenant has (`Domains.verifiedDomainsOf`
 * caches the tenants without one); without it each link reads them.
 */
export const makeManageLinks = (
  verifiedDomainsOf?: (tenant: TenantId) => Effect.Effect<ReadonlyArray<Domain>, StorageFailure>
) =>
  Effect.gen(function*() {
    const storage = yield* Storage
    // Read once, when the layer is built: the composition root provides them to the layer.
    const mac = yield* ManageLinkMac
    const publicUrl = yield* PublicUrl
    const secrets = storage.collection(DeploymentSecretsCollection)
    const domains = storage.collection(DomainsCollection)
    const owners = storage.collection(DomainOwnersCollection)
    const accounts = storage.collection(AccountsCollection)
    const verifiedOf = verifiedDomainsOf ?? ((tenant: TenantId) =>
      Effect.map(Effect.provideService(domains.list({}), Tenant, tenant), (all) => all.filter((d) => d.status === "verified")))
    const system = <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.provideService(effect, Tenant, SYSTEM_TENANT)

    let cachedKey: Uint8Array | undefined
    /**
     * The deployment's MAC key: created once for every instance sharing the storage. An insert
     * that loses the race to another instance fails; both then read back the one that won. Its
     * value never leaves this closure (no log, response or event carries it). Call it outside a
     * transaction the first time (a failed insert would abort a PostgreSQL transaction).
     */
    const deploymentKey: Effect.Effect<Uint8Array, StorageFailure> = Effect.suspend(() => {
      if (cachedKey !== undefined) return Effect.succeed(cachedKey)
      const readBack = Effect.map(system(secrets.get(MANAGE_LINK_SECRET_ID)), Option.map((s) => s.secret))
      return Effect.gen(function*() {
        let secret = Option.getOrUndefined(yield* readBack)
        if (secret === undefined) {
          const bytes = new Uint8Array(SECRET_BYTES)
          globalThis.crypto.getRandomValues(bytes)
          const record: DeploymentSecret = { id: MANAGE_LINK_SECRET_ID, secret: base64url(bytes), created_at: (yield* currentStamp).iso }
          const inserted = yield* Effect.either(system(secrets.insert(record)))
          const stored = Option.getOrUndefined(yield* readBack)
          if (stored === undefined) return yield* (inserted._tag === "Left" ? Effect.fail(inserted.left) : Effect.die("secret vanished"))
          secret = stored
        }
        cachedKey = fromBase64url(secret)
        return cachedKey
      })
    })

    /**
     * The base of `tenant`'s public pages: `https://` its verified custom domain while it owns
     * one under a plan that has them, else the server's public URL.
     */
    const baseFor = (tenant: TenantId): Effect.Effect<string, StorageFailure> =>
      // The tenant's verified domains first: most have none, and then the account's plan
      // does not matter (one read per link instead of two).
      Effect.flatMap(verifiedOf(tenant), (verified) => verified.length === 0 ? publicUrl.baseFor(tenant) : customBaseFor(tenant, verified))

    const customBaseFor = (tenant: TenantId, verified: ReadonlyArray<Domain>): Effect.Effect<string, StorageFailure> =>
      Effect.gen(function*() {
        const account = Option.getOrUndefined(yield* system(accounts.get(tenant.account_id)))
        if (account !== undefined && (DOMAIN_PLANS as ReadonlyArray<string>).includes(account.plan)) {
          for (const domain of verified) {
            const owner = Option.getOrUndefined(yield* Effect.provideService(owners.get(domain.hostname), Tenant, DOMAIN_OWNERS_TENANT))
            if (owner?.account_id === tenant.account_id && owner.environment === tenant.environment)
              return originOfCustomDomain(domain.hostname)
          }
        }
        return yield* publicUrl.baseFor(tenant)
      })

    /**
     * Links' MACs by the message they sign. The deployment's key never changes once read, so
     * neither does a message's MAC; a booking read again (a page polled, a booking fetched
     * after a webhook) is not signed again, and signing is the dearest part of a link.
     */
    const signatures = new Map<string, string>()
    const signatureOf = (message: string): Effect.Effect<string, StorageFailure> => {
      const known = signatures.get(message)
      if (known !== undefined) return Effect.succeed(known)
      return Effect.flatMap(deploymentKey, (key) =>
        Effect.map(mac.sign(key, message, MAC_BYTES), (signature) => {
          if (signatures.size >= MAX_SIGNATURES) signatures.clear()
          signatures.set(message, signature)
          return signature
        }))
    }

    /**
     * `made` of the link of `booking` (at its `manage_version`) in `tenant`; `base` when the
     * caller already read it (a page of bookings). A link signed before is made without another
     * step: most links are (a booking read again, a page polled).
     */
    const withLink = <A>(
      tenant: TenantId,
      booking: Booking,
      base: string | undefined,
      made: (link: ManageLink) => A
    ): Effect.Effect<A, StorageFailure> => {
      const message = macMessage(tenant, booking.id, manageVersionOf(booking))
      const link = (signature: string, base: string): A => {
        const token = formatToken(tenant, booking.id, signature)
        return made({ url: `${base}/manage/${token}`, token })
      }
      const known = signatures.get(message)
      if (known !== undefined)
        return base !== undefined
          ? Effect.succeed(link(known, base))
          : Effect.map(baseFor(tenant), (base) => link(known, base))
      const signed = signatureOf(message)
      return base !== undefined ? Effect.map(signed, (signature) => link(signature, base)) : Effect.zipWith(signed, baseFor(tenant), link)
    }

    /** The link of `booking` (at its `manage_version`) in `tenant`; `base` when the caller already read it (a page of bookings). */
    const linkIn = (tenant: TenantId, booking: Booking, base?: string): Effect.Effect<ManageLink, StorageFailure> =>
      withLink(tenant, booking, base, (link) => link)

    /** Whether `claimedMac` is the MAC of `booking`'s current link in `tenant` (constant-time). */
    const verify = (tenant: TenantId, booking: Booking, claimedMac: string): Effect.Effect<boolean, StorageFailure> =>
      Effect.flatMap(
        deploymentKey,
        (key) => mac.verify(key, macMessage(tenant, booking.id, manageVersionOf(booking)), claimedMac, MAC_BYTES)
      )

    /** The booking with its `manage_url` and `manage_version`: for the account's eyes only. */
    const withManageUrl = (tenant: TenantId, booking: Booking, base?: string): Effect.Effect<Booking, StorageFailure> =>
      // Object.assign, not a spread with two more fields: V8 copies a stored booking (JSON.parse's
      // object) that way at a third of the cost.
      withLink(tenant, booking, base, (link) =>
        Object.assign({}, booking, { manage_version: manageVersionOf(booking), manage_url: link.url }))

    return { deploymentKey, baseFor, linkIn, verify, withManageUrl } as const
  })

export type ManageLinks = Effect.Effect.Success<ReturnType<typeof makeManageLinks>>
