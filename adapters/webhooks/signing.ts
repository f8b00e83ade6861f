/**
 * Standard Webhooks signatures (https://www.standardwebhooks.com): the headers of one
 * attempt. `webhook-signature` is `v1,<base64 HMAC-SHA256 of "id.timestamp.body">` keyed
 * with the base64-decoded secret after `whsec_`; during a secret rotation's grace period it
 * lists one signature per live secret, space-separated, and a receiver that knows either
 * secret verifies.
 */
import { createHmac } from "node:crypto"
import { SECRET_PREFIX } from "../../src/webhooks/secret.js"

const keys = new Map<string, Buffer>()

/** The HMAC key of a `whsec_…` secret (cached: the dispatcher signs with few secrets, often). */
const keyOf = (secret: string): Buffer => {
  let key = keys.get(secret)
  if (key === undefined) {
    const encoded = secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret
    key = Buffer.from(encoded, "base64")
    if (keys.size > 10_000) keys.clear()
    keys.set(secret, key)
  }
  return key
}

/** `v1,<signature>` of one message with one secret. */
export const sign = (secret: string, id: string, timestamp: number, body: string): string =>
  `v1,${createHmac("sha256", keyOf(secret)).update(`${id}.${timestamp}.${body}`).digest("base64")}`

export type SignedHeaders = {
  readonly "webhook-id": string
  readonly "webhook-timestamp": string
  readonly "webhook-signature": string
}

/** The three Standard Webhooks headers for `body`, signed with every secret given. */
export const signedHeaders = (
  secrets: ReadonlyArray<string>,
  id: string,
  timestampSeconds: number,
  body: string
): SignedHeaders => ({
  "webhook-id": id,
  "webhook-timestamp": String(timestampSeconds),
  "webhook-signature": secrets.map((secret) => sign(secret, id, timestampSeconds, body)).join(" ")
})
