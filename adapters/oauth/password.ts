/**
 * The password hasher: scrypt from node:crypto (N = 2^15, r = 8, p = 1: ~50 ms and 32 MiB
 * per hash, OWASP's floor), a 16-byte salt per password, compared with timingSafeEqual.
 * The hash names its parameters, so they can be raised without breaking stored hashes.
 */
import { Effect, Layer } from "effect"
import { randomBytes, scrypt, timingSafeEqual } from "node:crypto"
import { PasswordHasher } from "../../src/ports/passwordHasher.js"

const N = 1 << 15
const R = 8
const P = 1
const KEY_LENGTH = 32
const MAX_MEM = 64 * 1024 * 1024

const derive = (password: string, salt: Buffer, n: number, r: number, p: number) =>
  Effect.async<Buffer, Error>((resume) => {
    scrypt(password.normalize("NFKC"), salt, KEY_LENGTH, { N: n, r, p, maxmem: MAX_MEM }, (error, key) =>
      resume(error === null ? Effect.succeed(key) : Effect.fail(error)))
  })

export const hashPassword = (password: string) =>
  Effect.gen(function*() {
    const salt = randomBytes(16)
    const key = yield* Effect.orDie(derive(password, salt, N, R, P))
    return `scrypt$${N}$${R}$${P}$${salt.toString("base64url")}$${key.toString("base64url")}`
  })

export const verifyPassword = (password: string, stored: string) =>
  Effect.gen(function*() {
    const parts = stored.split("$")
    if (parts.length !== 6 || parts[0] !== "scrypt") return false
    const [n, r, p] = [Number(parts[1]), Number(parts[2]), Number(parts[3])]
    if (![n, r, p].every((x) => Number.isInteger(x) && x > 0) || n > 1 << 20) return false
    const expected = Buffer.from(parts[5]!, "base64url")
    if (expected.length !== KEY_LENGTH) return false
    const key = yield* Effect.orElseSucceed(derive(password, Buffer.from(parts[4]!, "base64url"), n, r, p), () => undefined)
    return key !== undefined && timingSafeEqual(key, expected)
  })

export const ScryptPasswordHasherLive = Layer.succeed(PasswordHasher, PasswordHasher.of({ hash: hashPassword, verify: verifyPassword }))
