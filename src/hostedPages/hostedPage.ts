/**
 * The hosted pages' publishable key (docs/api.md §10): one per account and environment, its
 * secret derived from the deployment secret, so every instance computes the same one and the
 * plaintext is never stored. It is an ordinary publishable key, named and marked so an
 * account can tell it from its own; it is accepted only from pages this server serves.
 */
import type { ApiKey } from "../keys/apiKey.js"
import type { TenantId } from "../ports/tenant.js"

export const HOSTED_PAGE_KEY_NAME = "Hosted booking pages (managed by Slotwise)"
/** The metadata entry that marks the key. */
export const HOSTED_PAGE_MARK = "slotwise_hosted_pages"

/** The message whose HMAC under the deployment secret is the key's secret. */
export const hostedKeyMessage = (tenant: TenantId): string => `hosted-page-key:${tenant.account_id}:${tenant.environment}`

export const isHostedPageKey = (key: Pick<ApiKey, "type" | "metadata">): boolean =>
  key.type === "publishable" && key.metadata[HOSTED_PAGE_MARK] === "true"
