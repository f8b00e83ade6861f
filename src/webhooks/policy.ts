/**
 * How webhook URLs are checked where the core cannot look itself: whether private addresses
 * are allowed (`--allow-private-webhooks`, tests), and how a hostname resolves (the delivery
 * adapter's DNS). The default refuses private addresses and does not resolve names, so a
 * name is checked only at delivery time.
 */
import { Context, Effect } from "effect"
import { validationFailed } from "../domain/validation.js"
import { addressBlockReason, hostOf, isIpLiteral, literalHostBlockReason } from "./address.js"

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

/**
 * The address rule for a URL this server will fetch or post to (a webhook endpoint, a
 * calendar feed), its syntax already checked: a literal non-public address or `localhost`
 * is refused, and so is a name that resolves to one when a resolver is available; all of it
 * unless private addresses are allowed. A refusal names the `url` field.
 */
export const checkOutboundUrl = (policy: WebhookPolicyService, text: string) =>
  Effect.gen(function*() {
    if (policy.allowPrivate) return
    const invalidUrl = (message: string) => validationFailed([{ path: "url", message }])
    const url = new URL(text)
    const literal = literalHostBlockReason(url)
    if (literal !== undefined) {
      return yield* invalidUrl(`must not point to a ${literal} address`)
    }
    const host = hostOf(url)
    if (policy.resolve === undefined || isIpLiteral(host)) return
    const addresses = yield* policy.resolve(host).pipe(Effect.orElseSucceed((): ReadonlyArray<string> => []))
    for (const address of addresses) {
      const reason = addressBlockReason(address)
      if (reason !== undefined) return yield* invalidUrl(`resolves to ${address}, a ${reason} address`)
    }
  })
