/**
 * Custom domains on the request side: which hostname a request was sent to (`Host`, or
 * `X-Forwarded-Host` when the server trusts its proxy), whose verified domain that is, and
 * the browser origin a publishable key's request acts from. Each lookup goes through the
 * core's cache (`Domains.accountForHost`); requests without a publishable key never look.
 */
import { Effect, Option } from "effect"
import type { Caller } from "../../src/auth/access.js"
import { hostOfHeader, originOfCustomDomain } from "../../src/domains/domain.js"
import type { StorageFailure } from "../../src/domain/errors.js"
import type { Domains } from "../../src/domains/Domains.js"
import type { TenantId } from "../../src/ports/tenant.js"
import { isHostedPageKey } from "../../src/hostedPages/hostedPage.js"

type Headers = Readonly<Record<string, string | undefined>>

/** The hostname a request was sent to; `X-Forwarded-Host` counts only behind a trusted proxy. */
export const requestHost = (headers: Headers, trustProxy: boolean): string | undefined => {
  const forwarded = trustProxy ? headers["x-forwarded-host"]?.split(",")[0]?.trim() : undefined
  return hostOfHeader(forwarded || headers.host)
}

/** The tenant whose verified custom domain the request was sent to, or none: whose hosted page to serve. */
export const makeHostTenant =
  (domains: Domains, trustProxy: boolean) => (headers: Headers): Effect.Effect<Option.Option<TenantId>, StorageFailure> => {
    const host = requestHost(headers, trustProxy)
    return host === undefined ? Effect.succeedNone : domains.accountForHost(host)
  }

export interface BrowserOrigin {
  /** The `Origin` header, or without one, the `https://` origin of the custom domain the request was sent to. */
  readonly origin: string | undefined
  /** The tenant whose verified custom domain `origin` is. */
  readonly domainOwner: TenantId | undefined
}

/**
 * The hosted pages' key works only from pages this server serves: same-origin requests (no
 * `Origin`, or one naming the host the request was sent to). A page on any other site sends
 * its own origin with every cross-origin call.
 */
const sameOriginPage = (origin: string | undefined, headers: Headers, trustProxy: boolean): string | undefined => {
  const sent = (trustProxy ? headers["x-forwarded-host"]?.split(",")[0]?.trim() || headers.host : headers.host)?.toLowerCase()
  if (sent === undefined || sent === "") return undefined
  if (origin === undefined) return `http://${sent}`
  return URL.canParse(origin) && new URL(origin).host === sent ? origin : undefined
}

/**
 * Where a publishable key's request comes from. A browser sends no `Origin` on a same-origin
 * GET, so a page served on a custom domain calling `/v1` on that domain acts from the
 * domain's own origin.
 */
export const makeBrowserOrigin = (domains: Domains | undefined, trustProxy: boolean) => {
  const hostTenant = domains === undefined ? undefined : makeHostTenant(domains, trustProxy)
  return (caller: Caller, headers: Headers): Effect.Effect<BrowserOrigin, StorageFailure> => {
    const origin = headers.origin
    if (caller._tag === "Authenticated" && isHostedPageKey(caller.principal.key)) {
      const page = sameOriginPage(origin, headers, trustProxy)
      return Effect.succeed(
        page === undefined ? { origin, domainOwner: undefined } : { origin: page, domainOwner: caller.principal.tenant }
      )
    }
    // Only publishable keys are checked against origins; a listed origin needs no lookup.
    if (
      domains === undefined || hostTenant === undefined || caller._tag !== "Authenticated" || caller.principal.key.type !== "publishable" ||
      (origin !== undefined && caller.principal.account.allowed_origins.includes(origin))
    ) {
      return Effect.succeed({ origin, domainOwner: undefined })
    }
    if (origin !== undefined) {
      return Effect.map(domains.tenantForOrigin(origin), (owner) => ({ origin, domainOwner: Option.getOrUndefined(owner) }))
    }
    return Effect.map(hostTenant(headers), (owner) =>
      Option.match(owner, {
        onNone: () => ({ origin: undefined, domainOwner: undefined }),
        onSome: (tenant) => ({ origin: originOfCustomDomain(requestHost(headers, trustProxy)!), domainOwner: tenant })
      }))
  }
}
