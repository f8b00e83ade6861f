/**
 * Account users (docs/api.md §7): created by the operator, signing in to authorize OAuth
 * clients. Passwords go through the `PasswordHasher` port and are never returned.
 */
import { Effect, Option, Schema } from "effect"
import { AccountsCollection, SYSTEM_TENANT } from "../auth/collections.js"
import { ValidationFailed } from "../domain/errors.js"
import { isWellFormedId } from "../domain/ids.js"
import { emailKey, type User, UserCreate } from "./user.js"
import { findById, listPage, newResource, PageParams } from "../internal/resources.js"
import { containsNulOrLoneSurrogate, decodeInput } from "../domain/validation.js"
import { type StoredUser, UsersCollection } from "../oauth/collections.js"
import { PasswordHasher } from "../ports/passwordHasher.js"
import { OAuthGrants } from "../oauth/OAuthGrants.js"
import { Storage } from "../ports/storage.js"
import { Tenant } from "../ports/tenant.js"

export const UserListParams = Schema.Struct(PageParams).annotations({ identifier: "UserListParams" })
export type UserListParams = typeof UserListParams.Encoded

/** A user as the outside sees it: without the password hash and the lookup key. */
export const publicUser = ({ email_key: _k, password_hash: _h, ...user }: StoredUser): User => user

const keyOf = (accountId: string, email: string) => `${accountId}\n${emailKey(email)}`

/**
 * A hash of a password nobody has, verified when the email is unknown, so a sign-in takes
 * as long for a missing user as for a wrong password (no user enumeration by timing).
 */
let decoy: string | undefined

export class Users extends Effect.Service<Users>()("slotwise/Users", {
  effect: Effect.gen(function*() {
    const storage = yield* Storage
    const hasher = yield* PasswordHasher
    const grants = yield* OAuthGrants
    const users = storage.collection(UsersCollection)
    const accounts = storage.collection(AccountsCollection)
    const system = <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.provideService(effect, Tenant, SYSTEM_TENANT)
    const decodeCreate = decodeInput(UserCreate)
    const decodeList = decodeInput(UserListParams)

    const requireAccount = (accountId: string) => Effect.asVoid(findById("account", (id) => system(accounts.get(id)))(accountId))

    const byEmail = (accountId: string, email: string) =>
      // No stored email holds a NUL (inputs refuse it); a sign-in form may send one.
      containsNulOrLoneSurrogate(email) ? Effect.succeed(undefined) : Effect.map(
        system(users.list({ where: [{ column: "email_key", op: "eq", value: keyOf(accountId, email) }], limit: 1 })),
        (rows) => rows[0]
      )

    const create = (accountId: string, input: typeof UserCreate.Encoded) =>
      Effect.gen(function*() {
        const fields = yield* decodeCreate(input)
        yield* requireAccount(accountId)
        const password_hash = yield* hasher.hash(fields.password)
        return yield* storage.transaction(Effect.gen(function*() {
          if ((yield* byEmail(accountId, fields.email)) !== undefined) {
            return yield* new ValidationFailed({
              detail: `${fields.email} is already a user of ${accountId}`,
              errors: [{ path: "email", message: "is already a user of this account" }]
            })
          }
          const user: StoredUser = {
            ...(yield* newResource("user")),
            object: "user",
            account_id: accountId,
            email: fields.email.trim(),
            name: fields.name,
            role: fields.role ?? "member",
            email_key: keyOf(accountId, fields.email),
            password_hash
          }
          yield* system(users.insert(user))
          return publicUser(user)
        }))
      })

    const find = (accountId: string, userId: string) =>
      findById("user of this account", (id) => Effect.map(system(users.get(id)), Option.filter((user) => user.account_id === accountId)))(
        userId
      )

    const get = (accountId: string, userId: string) => Effect.map(find(accountId, userId), publicUser)

    const list = (accountId: string, params: UserListParams = {}) =>
      Effect.gen(function*() {
        const { cursor, limit } = yield* decodeList(params)
        yield* requireAccount(accountId)
        const page = yield* system(listPage(users, {
          where: [{ column: "account", op: "eq", value: accountId }],
          limit,
          cursor,
          filters: { account_id: accountId }
        }))
        return { ...page, data: page.data.map(publicUser) }
      })

    /** Removes the user with every grant they gave (their tokens stop working at once). */
    const remove = (accountId: string, userId: string) =>
      storage.transaction(Effect.gen(function*() {
        const user = yield* find(accountId, userId)
        yield* grants.revokeForUser(user.id)
        yield* system(users.remove(user.id))
        return publicUser(user)
      }))

    /** The user with this email and password in the account, or undefined (same time either way). */
    const verify = (accountId: string, email: string, password: string) =>
      Effect.gen(function*() {
        const user = yield* byEmail(accountId, email)
        if (user === undefined) {
          decoy ??= yield* hasher.hash(globalThis.crypto.randomUUID())
          yield* hasher.verify(password, decoy)
          return undefined
        }
        return (yield* hasher.verify(password, user.password_hash)) ? publicUser(user) : undefined
      })

    /** The user by id whatever the account (the authorization server's `findAccount`). */
    const lookup = (userId: string) =>
      isWellFormedId(userId) ? Effect.map(system(users.get(userId)), Option.map(publicUser)) : Effect.succeed(Option.none())

    return { create, get, list, remove, verify, lookup } as const
  })
}) {}
