/** Webhook delivery adapters: Standard Webhooks signing, the HTTP transport with its SSRF guard, the dispatcher. */
export { type DispatcherStats, makeDispatcher, WebhookDispatcherLive, type WebhookDispatcherOptions } from "./dispatcher.js"
export { BlockedAddressError, guardedLookup, type Resolver, systemResolver, WebhookPolicyLive } from "./guard.js"
export { sign, signedHeaders, type SignedHeaders } from "./signing.js"
export { type HttpTransportOptions, makeHttpTransport, type Transport, type WebhookRequest } from "./transport.js"
