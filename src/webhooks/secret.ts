/** Webhook signing secrets: `whsec_` and the base64 of 32 random bytes (Standard Webhooks). */
import { Effect } from "effect"
import { toMillis } from "../domain/common.js"
import type { StoredSecret } from "./webhook.js"

export const SECRET_PREFIX = "whsec_"
export const SECRET_BYTES = 32

export const newWebhookSecret: Effect.Effect<string> = Effect.sync(() => {
  const bytes = new Uint8Array(SECRET_BYTES)
  globalThis.crypto.getRandomValues(bytes)
  return SECRET_PREFIX + btoa(String.fromCharCode(...bytes))
})

/** An opaque token naming one claim of a queued delivery. */
export const newLease: Effect.Effect<string> = Effect.sync(() => globalThis.crypto.randomUUID())

/** The secrets that still sign at `nowMs`, newest first. */
export const liveSecrets = (secrets: ReadonlyArray<StoredSecret>, nowMs: number): Array<StoredSecret> =>
  secrets.filter((s) => s.expires_at === null || toMillis(s.expires_at) > nowMs)
