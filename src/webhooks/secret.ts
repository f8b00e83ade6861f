/** Webhook signing secrets: `whsec_` and the base64 of 32 random bytes (Standard Webhooks). */
import { Effect } from "effect"

export const SECRET_PREFIX = "whsec_"
export const SECRET_BYTES = 32

export const newWebhookSecret: Effect.Effect<string> = Effect.sync(() => {
  const bytes = new Uint8Array(SECRET_BYTES)
  globalThis.crypto.getRandomValues(bytes)
  return SECRET_PREFIX + btoa(String.fromCharCode(...bytes))
})

/** An opaque token naming one claim of a queued delivery. */
export const newLease: Effect.Effect<string> = Effect.sync(() => globalThis.crypto.randomUUID())
