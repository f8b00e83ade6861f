/**
 * Accounts (docs/api.md §2, §5): created by the operator (admin API or `slotwise accounts
 * create`) together with a secret and a publishable key for each environment.
 *
 * Handles. Every account has a unique handle (its hosted page's slug). Uniqueness lives in
 * one map keyed by handle (a collection of its own tenant, so the storage's primary key makes
 * it unique), written in the same transaction as the account; a handle is looked up and
 * claimed inside one write transaction, which no other write interleaves with, so two accounts
 * never get one handle. Accounts stored before handles existed get theirs when the service
 * starts (`assignMissingHandles`), each in a transaction that checks again.
 *
 * A handle an account gives up stays in the map for `HANDLE_HOLD_DAYS`, marked held: its pages
 * redirect to the account's handle (`movedTo`), the account may take it back, and no other
 * account can take it, so links to the old page never show another business. Once the hold
 * lapses the entry is free: the next claim overwrites it.
 */
import { Clock, Effect, Option } from "effect"
import { AccountsCollection, SYSTEM_TENANT } from "../auth/collections.js"
import { ApiKeys } from "../keys/ApiKeys.js"
import {
  type Account,
  AccountCreate,
  AccountSettingsUpdate,
  AccountUpdate,
  type AccountWithKeys,
  BRANDING_PLANS,
  HANDLE_HOLD_DAYS,
  handleBaseOf,
  handleCandidate,
  handleProblem,
  handleShapeProblem,
  mergeBranding,
  NO_BRANDING,
  type Plan,
  randomHandle,
  withLimits
} from "./account.js"
import { PUBLISHABLE_SCOPES, SCOPES } from "../keys/apiKey.js"
import { HandleTaken, PlanRequired } from "../domain/errors.js"
import { changes, currentStamp, findOr404, newResource } from "../internal/resources.js"
import { decodeInput } from "../domain/validation.js"
import { formatInstant } from "../domain/common.js"
import type { CollectionSpec } from "../ports/storage.js"
import { Storage } from "../ports/storage.js"
import { copyAccountReminders } from "../reminders/Reminders.js"
import { Tenant, type TenantId } from "../ports/tenant.js"
import { Account as AccountSchema } from "./account.js"

/** A handle and the account that has it, or had it until lately; the id is the handle. */
export interface HandleOwner {
  readonly id: string
  readonly account_id: string
  /** Set when the account gave the handle up: when it did, and until when the handle stays its own (instants). */
  readonly released_at?: string
  readonly held_until?: string
}

export const HandleOwnersCollection: CollectionSpec<HandleOwner> = {
  name: "handle_owners",
  indexes: {},
  order: []
}

/** The tenant of the handle map: no account id starts with `_`. */
export const HANDLE_OWNERS_TENANT: TenantId = { account_id: "_handles", environment: "production" }

/** How many `-N` suffixes a name's handle tries before a random handle. */
const HANDLE_ATTEMPTS = 100

const HANDLE_HOLD_MS = HANDLE_HOLD_DAYS * 24 * 60 * 60 * 1000

/** Whether the entry still keeps the handle from other accounts at `now`: owned, or held and not lapsed. */
const keepsHandle = (entry: HandleOwner, now: number): boolean => entry.held_until === undefined || Date.parse(entry.held_until) > now

const hidePoweredByRefused = (plan: Plan) =>
  new PlanRequired({
    detail: `hiding "Powered by Slotwise" needs the ${BRANDING_PLANS.join(" or ")} plan; this account is on ${plan}`
  })

export class Accounts extends Effect.Service<Accounts>()("slotwise/Accounts", {
  effect: Effect.gen(function*() {
    const storage = yield* Storage
    const apiKeys = yield* ApiKeys
    const accounts = storage.collection(AccountsCollection)
    const handles = storage.collection(HandleOwnersCollection)
    const system = <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.provideService(effect, Tenant, SYSTEM_TENANT)
    const asHandles = <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.provideService(effect, Tenant, HANDLE_OWNERS_TENANT)
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

    // ---- handles (inside the caller's transaction) -----------------------------------------

    const ownerOf = (handle: string) => asHandles(handles.get(handle))

    /** Writes `handle` as the account's: over a lapsed entry, or a held one of the same account. */
    const take = (handle: string, accountId: string, entry: Option.Option<HandleOwner>) =>
      asHandles(
        Option.isSome(entry) ? handles.update({ id: handle, account_id: accountId }) : handles.insert({ id: handle, account_id: accountId })
      )

    /** Whether no account keeps `entry`'s handle from `accountId` at `now`. */
    const freeFor = (entry: Option.Option<HandleOwner>, accountId: string | undefined, now: number) =>
      Option.isNone(entry) || entry.value.account_id === accountId || !keepsHandle(entry.value, now)

    /** Makes `handle` the account's, failing when another account has it or gave it up lately. */
    const claim = (handle: string, accountId: string) =>
      Effect.gen(function*() {
        const entry = yield* ownerOf(handle)
        if (freeFor(entry, accountId, yield* Clock.currentTimeMillis)) {
          const ownAlready = Option.isSome(entry) && entry.value.account_id === accountId && entry.value.held_until === undefined
          if (!ownAlready) yield* take(handle, accountId, entry)
          return
        }
        const held = Option.getOrThrow(entry)
        return yield* new HandleTaken({
          detail: held.held_until === undefined
            ? `the handle ${handle} belongs to another account`
            : `the handle ${handle} was released by another account on ${held.released_at} and stays that account's until ${held.held_until}`
        })
      })

    /** Keeps the handle the account gives up as its own for the hold period. */
    const release = (handle: string, accountId: string) =>
      Effect.gen(function*() {
        const entry = yield* ownerOf(handle)
        if (Option.isNone(entry) || entry.value.account_id !== accountId) return
        const now = yield* Clock.currentTimeMillis
        yield* asHandles(handles.update({
          id: handle,
          account_id: accountId,
          released_at: formatInstant(now),
          held_until: formatInstant(now + HANDLE_HOLD_MS)
        }))
      })

    /** The first free handle the name suggests (`name`, `name-2` …), else a random one; claimed for the account. */
    const claimFromName = (name: string, accountId: string) =>
      Effect.gen(function*() {
        const now = yield* Clock.currentTimeMillis
        const tryTake = (candidate: string) =>
          Effect.flatMap(ownerOf(candidate), (entry) =>
            freeFor(entry, undefined, now) ? Effect.as(take(candidate, accountId, entry), true) : Effect.succeed(false))
        const base = handleBaseOf(name)
        if (base !== undefined) {
          for (let attempt = 1; attempt <= HANDLE_ATTEMPTS; attempt++) {
            const candidate = handleCandidate(base, attempt)
            if (handleProblem(candidate) === undefined && (yield* tryTake(candidate)))
              return candidate
          }
        }
        for (;;) {
          const candidate = randomHandle()
          if (yield* tryTake(candidate))
            return candidate
        }
      })

    /** Gives every account stored without a handle one from its name; safe to run in several processes at once. */
    const assignMissingHandles = Effect.gen(function*() {
      const missing = (yield* system(accounts.list({}))).filter((a) => typeof a.handle !== "string")
      for (const stale of missing) {
        yield* storage.transaction(Effect.gen(function*() {
          const current = yield* system(accounts.get(stale.id))
          if (Option.isNone(current) || typeof current.value.handle === "string") return
          const handle = yield* claimFromName(current.value.name, current.value.id)
          yield* system(accounts.update({ ...current.value, handle, branding: current.value.branding ?? NO_BRANDING }))
        }))
      }
      return missing.length
    })

    /** The account whose handle `handle` is, if any (hosted pages: `/book/{handle}`). */
    const byHandle = (handle: string) =>
      Effect.gen(function*() {
        if (handleShapeProblem(handle) !== undefined) return Option.none<Account>()
        const owner = yield* ownerOf(handle)
        if (Option.isNone(owner) || owner.value.held_until !== undefined) return Option.none<Account>()
        const account = yield* system(accounts.get(owner.value.account_id))
        return Option.map(Option.filter(account, (a) => a.handle === handle), withLimits)
      })

    /** The handle of the account that gave `handle` up within the hold period, if any: where its pages redirect. */
    const movedTo = (handle: string) =>
      Effect.gen(function*() {
        if (handleShapeProblem(handle) !== undefined) return Option.none<string>()
        const owner = yield* ownerOf(handle)
        if (Option.isNone(owner) || owner.value.held_until === undefined) return Option.none<string>()
        if (!keepsHandle(owner.value, yield* Clock.currentTimeMillis)) return Option.none<string>()
        const account = yield* system(accounts.get(owner.value.account_id))
        return Option.filter(Option.map(account, (a) => a.handle), (current) => current !== handle)
      })

    /** A new account with a secret and a publishable key in each environment. */
    const create = (input: typeof AccountCreate.Encoded) =>
      Effect.gen(function*() {
        const fields = yield* decodeCreate(input)
        return yield* storage.transaction(Effect.gen(function*() {
          const resource = yield* newResource("account")
          if (fields.handle !== undefined) yield* claim(fields.handle, resource.id)
          const account: Account = withLimits({
            ...resource,
            object: "account" as const,
            name: fields.name,
            handle: fields.handle ?? (yield* claimFromName(fields.name, resource.id)),
            plan: fields.plan,
            allowed_origins: fields.allowed_origins ?? [],
            branding: NO_BRANDING,
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
    // A handle change claims the new handle and frees the old one in the same transaction;
    // hiding "Powered by Slotwise" is checked against the plan the change leaves.
    const apply = (id: string, { branding: brandingPatch, ...patch }: Partial<AccountUpdate & AccountSettingsUpdate>) =>
      storage.transaction(Effect.gen(function*() {
        const current = yield* find(id)
        const plan = patch.plan ?? current.plan
        if (brandingPatch?.hide_powered_by === true && !BRANDING_PLANS.includes(plan)) return yield* hidePoweredByRefused(plan)
        const fields = brandingPatch === undefined ? patch : { ...patch, branding: mergeBranding(current.branding, brandingPatch) }
        if (!changes(current, fields)) return current
        if (fields.handle !== undefined && fields.handle !== current.handle) {
          yield* claim(fields.handle, id)
          yield* release(current.handle, id)
        }
        const next = yield* validate(withLimits({ ...current, ...fields, updated_at: (yield* currentStamp).iso }))
        yield* system(accounts.update(next))
        if (patch.reminders !== undefined) yield* copyAccountReminders(storage, id, next.reminders)
        yield* apiKeys.invalidate
        return next
      }))

    /** The operator's change: any field. */
    const update = (id: string, input: typeof AccountUpdate.Encoded) => Effect.flatMap(decodeUpdate(input), (patch) => apply(id, patch))

    /** The account's own change (PATCH /v1/account): its name, handle, branding and allowed origins only. */
    const updateSettings = (id: string, input: typeof AccountSettingsUpdate.Encoded) =>
      Effect.flatMap(decodeSettings(input), (patch) => apply(id, patch))

    const list = system(accounts.list({})).pipe(Effect.map((all) => all.map(withLimits)))

    /** Whether no account exists yet (first start of a server). */
    const isEmpty = Effect.map(system(accounts.list({ limit: 1 })), (rows) => rows.length === 0)

    /** Whether some account allows `origin` (CORS preflights carry no credential). */
    const originAllowedAnywhere = (origin: string) =>
      Effect.map(system(accounts.list({})), (all) => all.some((a) => a.allowed_origins.includes(origin)))

    // A store that fails here cannot serve anything either: starting fails with it.
    yield* Effect.orDie(assignMissingHandles)

    return {
      create,
      get: find,
      byHandle,
      movedTo,
      update,
      updateSettings,
      list,
      isEmpty,
      originAllowedAnywhere,
      assignMissingHandles
    } as const
  })
}) {}
