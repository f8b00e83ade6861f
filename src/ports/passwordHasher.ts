/**
 * The password hashing port. A slow salted hash is platform work (scrypt in node:crypto),
 * so the core names what it needs and an adapter provides it (adapters/oauth/password.ts).
 */
import { Context, type Effect } from "effect"

export interface PasswordHasherService {
  /** A self-describing hash of `password` with a fresh salt. */
  readonly hash: (password: string) => Effect.Effect<string>
  /** Whether `password` matches `hash`, compared in constant time; false for a malformed hash. */
  readonly verify: (password: string, hash: string) => Effect.Effect<boolean>
}

export class PasswordHasher extends Context.Tag("slotwise/PasswordHasher")<PasswordHasher, PasswordHasherService>() {}
