/**
 * How webhook URLs are checked where the core cannot look itself: whether private addresses
 * are allowed (`--allow-private-webhooks`, tests), and how a hostname resolves (the delivery
 * adapter's DNS). The default refuses private addresses and does not resolve names, so a
 * name is checked only at delivery time.
 */
import { Context, type Effect } from "effect"

export interface WebhookPolicyService {
  /** Let webhooks reach private, loopback and link-local addresses. */
  readonly allowPrivate: boolean
  /**
   * The addresses a hostname resolves to, when a resolver is available. A failure means
   * "unknown": the URL is accepted and delivery checks again.
   */
  readonly resolve?: (hostname: string) => Effect.Effect<ReadonlyArray<string>, unknown>
}

export class WebhookPolicy extends Context.Reference<WebhookPolicy>()("slotwise/WebhookPolicy", {
  defaultValue: (): WebhookPolicyService => ({ allowPrivate: false })
}) {}
