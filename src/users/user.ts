/**
 * Account users (docs/api.md §7): the people who sign in to authorize an OAuth client. A user
 * belongs to one account (both environments); the password exists only as a slow salted
 * hash, made by the `PasswordHasher` port, and never leaves the storage layer.
 */
import { Schema } from "effect"
import { Email, Name, optional, Timestamps } from "../domain/common.js"
import { Id } from "../domain/ids.js"

export const UserRole = Schema.Literal("owner", "member").annotations({ identifier: "UserRole" })
export type UserRole = typeof UserRole.Type

/** Long enough to resist guessing, short enough that hashing a hostile body stays cheap. */
export const Password = Schema.String.pipe(
  Schema.minLength(12, { message: () => "must be at least 12 characters" }),
  Schema.maxLength(256, { message: () => "must be at most 256 characters" })
)

export const User = Schema.Struct({
  id: Id("user"),
  object: Schema.Literal("user"),
  account_id: Id("account"),
  email: Email.annotations({ description: "unique within the account, compared case-insensitively" }),
  name: Name,
  role: UserRole,
  ...Timestamps
}).annotations({ identifier: "User" })
export type User = typeof User.Type

export const UserCreate = Schema.Struct({
  email: Email,
  name: Name,
  password: Password,
  role: optional(UserRole)
}).annotations({ identifier: "UserCreate" })
export type UserCreate = typeof UserCreate.Type

/** How a user is found by email: lower case, trimmed. */
export const emailKey = (email: string): string => email.trim().toLowerCase()
