/** Webhooks: the `Webhooks` use case, an endpoint's and a delivery's schemas, the outbox, the address policy and the retry schedule. */
export * from "./webhook.js"
export { DeliveryListParams, WebhookListParams, Webhooks } from "./Webhooks.js"
export { type AttemptRecord, type ClaimedDelivery, type ClaimOptions, endpointKey, tenantKey, WebhookOutbox } from "./Outbox.js"
export { addressBlockReason, isIpLiteral, literalHostBlockReason } from "./address.js"
export { WebhookPolicy, type WebhookPolicyService } from "./policy.js"
export * from "./retrySchedule.js"
