/**
 * The server's public base URL: the one address every link the server hands out starts with
 * (manage links and hosted pages, unless the account has a verified custom domain; calendar
 * feed URLs and their events' UIDs, always).
 *
 * One rule, read once per link: the operator's `--public-url` (`SLOTWISE_PUBLIC_URL`), else
 * the address the server listens on (with its mount prefix), else `DEFAULT_PUBLIC_URL`. A
 * request's `Host` never decides it: links outlive the request that made them (a feed URL is
 * pasted into calendar apps, a manage link goes out in a webhook), a feed's UIDs must not
 * change with the host it is fetched through, and a `Host` header is the client's to forge.
 * Behind a proxy, set `--public-url` to the address clients use.
 */
import { Context, Effect } from "effect"
import type { TenantId } from "./tenant.js"
import { withoutTrailingSlash } from "./trailingSlash.js"

/** The address a server answers at when nothing else is said (`slotwise serve`'s default). */
export const DEFAULT_PUBLIC_URL = "http://127.0.0.1:8080"

export interface PublicUrlService {
  /** The base URL for `tenant`'s links, without a trailing slash. */
  readonly baseFor: (tenant: TenantId) => Effect.Effect<string>
}

export { withoutTrailingSlash }

export const fixedPublicUrl = (url: string): PublicUrlService => {
  const base = withoutTrailingSlash(url)
  return { baseFor: () => Effect.succeed(base) }
}

/** The hostname of a base URL, without its port: for names that must stay stable, such as feed UIDs. */
export const hostnameOfBase = (base: string): string | undefined => (URL.canParse(base) ? new URL(base).hostname || undefined : undefined)

export class PublicUrl extends Context.Reference<PublicUrl>()("slotwise/PublicUrl", {
  defaultValue: (): PublicUrlService => fixedPublicUrl(DEFAULT_PUBLIC_URL)
}) {}
