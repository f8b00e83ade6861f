/**
 * Accounts (docs/api.md §2, §5): created by the operator (admin API or `slotwise accounts
 * create`) together with a secret and a publishable key for each environment.
 */
import { Effect } from "effect"
import { AccountsCollection, SYSTEM_TENANT } from "./auth/collections.js"
import { ApiKeys } from "./ApiKeys.js"
import { type Account, AccountCreate, AccountSettingsUpdate, AccountUpdate, type AccountWithKeys, withLimits } from "./domain/account.js"
import { PUBLISHABLE_SCOPES, SCOPES } from "./domain/apiKey.js"
import { changes, currentStamp, findOr404, newResource } from "./internal/resources.js"
import { decodeInput } from "./internal/validation.js"
import { Storage } from "./ports/storage.js"
import { copyAccountReminders } from "./Reminders.js"
import { Tenant, type TenantId } from "./ports/tenant.js"
import { Account as AccountSchema } from "./domain/account.js"

export class Accounts extends Effect.Service<Accounts>()("slotwise/Accounts", {
  effect: Effect.gen(function*() {
    const storage = yield* Storage
    const apiKeys = yield* ApiKeys
    const accounts = storage.collection(AccountsCollection)
    const system = <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.provideService(effect, Tenant, SYSTEM_TENANT)
    const find = (id: string) => Effect.map(system(findOr404(accounts, "account")(id)), withLimits)
    const decodeCreate = decodeInput(AccountCreate)
    const decodeUpdate = decodeInput(AccountUpdate)
    const decodeSettings = decodeInput(AccountSettingsUpdate)
    const validate = decodeInput(AccountSchema)

    const keysFor = (tenant: TenantId) =>
      Effect.gen(function*() {
        const secret = yield* apiKeys.issue(tenant, {
          name: "Default secret key",
          type: "secret",
          scopes: SCOPES,
          expires_at: null,
          metadata: {},
          source_key_id: null
        })
        const publishable = yield* apiKeys.issue(tenant, {
          name: "Default publishable key",
          type: "publishable",
          scopes: PUBLISHABLE_SCOPES,
          expires_at: null,
          metadata: {},
          source_key_id: null
        })
        return { secret: secret.secret, publishable: publishable.secret }
      })

    /** A new account with a secret and a publishable key in each environment. */
    const create = (input: typeof AccountCreate.Encoded) =>
      Effect.gen(function*() {
        const fields = yield* decodeCreate(input)
        return yield* storage.transaction(Effect.gen(function*() {
          const account: Account = withLimits({
            ...(yield* newResource("account")),
            object: "account" as const,
            name: fields.name,
            plan: fields.plan,
            allowed_origins: fields.allowed_origins ?? [],
            rate_limit_per_minute: fields.rate_limit_per_minute ?? null,
            reminders: [],
            metadata: fields.metadata ?? {}
          })
          yield* system(accounts.insert(account))
          const sandbox = yield* keysFor({ account_id: account.id, environment: "sandbox" })
          const production = yield* keysFor({ account_id: account.id, environment: "production" })
          return { account, keys: { sandbox, production } } satisfies AccountWithKeys
        }))
      })

    // Accounts have no events: a change is stored, and cached credentials (which carry the
    // account's origins and limits) are dropped.
    const apply = (id: string, patch: Partial<AccountUpdate & AccountSettingsUpdate>) =>
      storage.transaction(Effect.gen(function*() {
        const current = yield* find(id)
        if (!changes(current, patch)) return current
        const next = yield* validate(withLimits({ ...current, ...patch, updated_at: (yield* currentStamp).iso }))
        yield* system(accounts.update(next))
        if (patch.reminders !== undefined) yield* copyAccountReminders(storage, id, next.reminders)
        yield* apiKeys.invalidate
        return next
      }))

    /** The operator's change: any field. */
    const update = (id: string, input: typeof AccountUpdate.Encoded) => Effect.flatMap(decodeUpdate(input), (patch) => apply(id, patch))

    /** The account's own change (PATCH /v1/account): its name and allowed origins only. */
    const updateSettings = (id: string, input: typeof AccountSettingsUpdate.Encoded) =>
      Effect.flatMap(decodeSettings(input), (patch) => apply(id, patch))

    const list = system(accounts.list({})).pipe(Effect.map((all) => all.map(withLimits)))

    /** Whether no account exists yet (first start of a server). */
    const isEmpty = Effect.map(system(accounts.list({ limit: 1 })), (rows) => rows.length === 0)

    /** Whether some account allows `origin` (CORS preflights carry no credential). */
    const originAllowedAnywhere = (origin: string) =>
      Effect.map(system(accounts.list({})), (all) => all.some((a) => a.allowed_origins.includes(origin)))

    return { create, get: find, update, updateSettings, list, isEmpty, originAllowedAnywhere } as const
  })
}) {}
