/**
 * Manage-link MACs on Node's crypto: HMAC-SHA256 and `timingSafeEqual`, so checking a token
 * takes the same time wherever a wrong MAC differs from the right one.
 */
import { Effect, Layer } from "effect"
import { createHmac, createSecretKey, type KeyObject, timingSafeEqual } from "node:crypto"
import { ManageLinkMac, type ManageLinkMacService } from "../../src/ports/manageLinks.js"

/**
 * The key as a `KeyObject`, made once per key: given the raw bytes, every HMAC imports them
 * again (~3 µs of a link's ~8). The deployment's key is one object for the process' life.
 */
const keyObjects = new WeakMap<Uint8Array, KeyObject>()
const keyObjectOf = (key: Uint8Array): KeyObject => {
  let made = keyObjects.get(key)
  if (made === undefined) {
    made = createSecretKey(key)
    keyObjects.set(key, made)
  }
  return made
}

const macBytes = (key: Uint8Array, message: string, bytes: number): Buffer =>
  createHmac("sha256", keyObjectOf(key)).update(message, "utf8").digest().subarray(0, bytes)

/** `equal` is Node's `timingSafeEqual`; a test passes a spy to see that it is the one used. */
export const makeNodeManageLinkMac = (
  equal: (a: NodeJS.ArrayBufferView, b: NodeJS.ArrayBufferView) => boolean = timingSafeEqual
): ManageLinkMacService => ({
  sign: (key, message, bytes) => Effect.sync(() => macBytes(key, message, bytes).toString("base64url")),
  verify: (key, message, mac, bytes) =>
    Effect.sync(() => {
      const expected = macBytes(key, message, bytes)
      const given = Buffer.from(mac, "base64url")
      // Lengths are public (a token's MAC has one length); only equal-length values reach the comparison.
      return given.length === expected.length && equal(given, expected)
    })
})

export const NodeManageLinkMacLive = Layer.succeed(ManageLinkMac, makeNodeManageLinkMac())
