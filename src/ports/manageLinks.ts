/**
 * The port of manage links' MAC, which signs and checks tokens. Its default is WebCrypto
 * in-process, so the core runs without it; the composition root provides Node's HMAC with
 * `timingSafeEqual`. The base URL links point at is the `PublicUrl` port (publicUrl.ts).
 */
import { Context, Effect } from "effect"
import { constantTimeEqual } from "../auth/crypto.js"

export interface ManageLinkMacService {
  /** Base64url of the first `bytes` bytes of HMAC-SHA256(`key`, `message`). */
  readonly sign: (key: Uint8Array, message: string, bytes: number) => Effect.Effect<string>
  /** Whether `mac` is that MAC, compared in time independent of where they differ. */
  readonly verify: (key: Uint8Array, message: string, mac: string, bytes: number) => Effect.Effect<boolean>
}

export const base64url = (bytes: Uint8Array): string =>
  btoa(String.fromCharCode(...bytes)).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "")

export const fromBase64url = (text: string): Uint8Array =>
  Uint8Array.from(atob(text.replace(/-/g, "+").replace(/_/g, "/")), (c) => c.charCodeAt(0))

const webCryptoSign = (key: Uint8Array, message: string, bytes: number): Effect.Effect<string> =>
  Effect.promise(async () => {
    const subtle = globalThis.crypto.subtle
    const imported = await subtle.importKey("raw", Uint8Array.from(key), { name: "HMAC", hash: "SHA-256" }, false, ["sign"])
    const mac = new Uint8Array(await subtle.sign("HMAC", imported, new TextEncoder().encode(message)))
    return base64url(mac.subarray(0, bytes))
  })

/** The platform's WebCrypto, for cores composed without the Node adapter. */
export const webCryptoManageLinkMac: ManageLinkMacService = {
  sign: webCryptoSign,
  verify: (key, message, mac, bytes) => Effect.map(webCryptoSign(key, message, bytes), (expected) => constantTimeEqual(expected, mac))
}

export class ManageLinkMac extends Context.Reference<ManageLinkMac>()("slotwise/ManageLinkMac", {
  defaultValue: (): ManageLinkMacService => webCryptoManageLinkMac
}) {}
