/**
 * Randomness and hashing for credentials, on WebCrypto (`globalThis.crypto`), so the core
 * stays free of Node built-ins. Secrets are never stored: only their SHA-256.
 */
import { Effect } from "effect"

const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

/**
 * `length` base62 characters from the platform CSPRNG, by rejection sampling (bytes ≥ 248
 * are dropped), so every character is uniform: 32 characters carry about 190 bits.
 */
export const randomBase62 = (length: number): string => {
  let out = ""
  while (out.length < length) {
    const bytes = new Uint8Array(length * 2)
    globalThis.crypto.getRandomValues(bytes)
    for (const b of bytes) {
      if (b >= 248) continue
      out += BASE62[b % 62]
      if (out.length === length) break
    }
  }
  return out
}

const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, "0"))

/** Lower-case hex SHA-256 of the UTF-8 bytes of `text`. */
export const sha256Hex = (text: string): Effect.Effect<string> =>
  Effect.promise(() => globalThis.crypto.subtle.digest("SHA-256", new TextEncoder().encode(text))).pipe(
    Effect.map((digest) => {
      const bytes = new Uint8Array(digest)
      let hex = ""
      for (const b of bytes) hex += HEX[b]
      return hex
    })
  )

/** Equality whose running time depends only on the length of the inputs, not where they differ. */
export const constantTimeEqual = (a: string, b: string): boolean => {
  const length = Math.max(a.length, b.length)
  let diff = a.length ^ b.length
  for (let i = 0; i < length; i++) diff |= (a.charCodeAt(i) | 0) ^ (b.charCodeAt(i) | 0)
  return diff === 0
}
