/**
 * The SSRF guard's network side: hostname resolution for the URL check at create/update
 * time (the `WebhookPolicy` the core reads) and a `lookup` for outgoing connections that
 * refuses non-public addresses at the moment of connecting, so a name that resolved to a
 * public address when the endpoint was saved cannot be rebound to 127.0.0.1 later.
 */
import * as dns from "node:dns"
import type { LookupFunction } from "node:net"
import { Effect, Layer } from "effect"
import { addressBlockReason } from "../../src/webhooks/address.js"
import { WebhookPolicy } from "../../src/webhooks/policy.js"

export interface ResolvedAddress {
  readonly address: string
  readonly family: number
}

/** Resolves a hostname to every address (the system resolver, as connections use). */
export type Resolver = (hostname: string) => Promise<ReadonlyArray<ResolvedAddress>>

export const systemResolver: Resolver = (hostname) => dns.promises.lookup(hostname, { all: true, verbatim: true })

/** An error for a connection to an address webhooks may not reach. */
export class BlockedAddressError extends Error {
  readonly code = "EBLOCKEDADDRESS"
  constructor(readonly address: string, readonly reason: string) {
    super(`refused to connect to ${address}: a ${reason} address`)
    this.name = "BlockedAddressError"
  }
}

/** The first address (of a resolution) webhooks may not reach, with why. */
export const firstBlocked = (
  addresses: ReadonlyArray<{ readonly address: string }>
): { readonly address: string; readonly reason: string } | undefined => {
  for (const { address } of addresses) {
    const reason = addressBlockReason(address)
    if (reason !== undefined) return { address, reason }
  }
  return undefined
}

/**
 * A `net` lookup that resolves with `resolver` and fails with `BlockedAddressError` when
 * any address is not public (all of them, so the connection cannot fall back to one).
 */
export const guardedLookup = (resolver: Resolver, allowPrivate: boolean): LookupFunction =>
  ((hostname: string, options: dns.LookupOptions, callback: (...args: Array<any>) => void) => {
    resolver(hostname).then(
      (addresses) => {
        if (addresses.length === 0) {
          const error = Object.assign(new Error(`${hostname} has no addresses`), { code: "ENOTFOUND" })
          return callback(error)
        }
        const blocked = allowPrivate ? undefined : firstBlocked(addresses)
        if (blocked !== undefined) return callback(new BlockedAddressError(blocked.address, blocked.reason))
        const family = options?.family === 4 || options?.family === 6 ? options.family : undefined
        const usable = family === undefined ? addresses : addresses.filter((a) => a.family === family)
        if (usable.length === 0) {
          return callback(Object.assign(new Error(`${hostname} has no IPv${family} address`), { code: "ENOTFOUND" }))
        }
        if (options?.all === true) callback(null, usable.map((a) => ({ address: a.address, family: a.family })))
        else callback(null, usable[0]!.address, usable[0]!.family)
      },
      (error) => callback(error)
    )
  }) as LookupFunction

const RESOLVE_TIMEOUT_MS = 2000

const withTimeout = <A>(promise: Promise<A>, ms: number): Promise<A> =>
  new Promise<A>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error("resolution timed out")), ms)
    promise.then(
      (value) => {
        clearTimeout(timer)
        resolve(value)
      },
      (error) => {
        clearTimeout(timer)
        reject(error)
      }
    )
  })

/**
 * The policy the core checks webhook URLs with: private addresses allowed or not, and
 * hostnames resolved with the system resolver (bounded to 2 s; an unresolvable name is
 * accepted and checked again at delivery).
 */
export const WebhookPolicyLive = (options: { readonly allowPrivate?: boolean; readonly resolver?: Resolver } = {}) =>
  Layer.succeed(WebhookPolicy, {
    allowPrivate: options.allowPrivate ?? false,
    resolve: (hostname: string) =>
      // Real time, not Effect's Clock: a controlled test clock must not stall a lookup.
      Effect.tryPromise(() => withTimeout((options.resolver ?? systemResolver)(hostname), RESOLVE_TIMEOUT_MS)).pipe(
        Effect.map((addresses) => addresses.map((a) => a.address))
      )
  })
