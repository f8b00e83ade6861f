/**
 * Webhooks: the `Webhooks` use case, an endpoint's and a delivery's schemas, the outbox the
 * dispatcher reads, the address policy and the retry schedule's limits (the dispatcher's own
 * claim keys and verdicts stay in their modules).
 */
export * from "./webhook.js"
export { DeliveryListParams, WebhookListParams, Webhooks } from "./Webhooks.js"
export { WebhookOutbox } from "./Outbox.js"
export { addressBlockReason, isIpLiteral, literalHostBlockReason } from "./address.js"
export { WebhookPolicy, type WebhookPolicyService } from "./policy.js"
export { MAX_ATTEMPTS, MAX_RETRY_AFTER_MS, RETRY_DELAYS_MS } from "./retrySchedule.js"
