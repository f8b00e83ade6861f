/**
 * Accounts (docs/api.md §2, §5): who owns data. Every account has a plan, the browser origins its
 * publishable keys may be used from, an optional operator-set rate limit, and two isolated
 * environments (`sandbox`, `production`) that share nothing but the account itself.
 */
import { Schema } from "effect"
import { Metadata, Name, ObjectType, optional, Timestamps } from "./common.js"
import { Id } from "./ids.js"
import { Reminders } from "./reminder.js"

export const Plan = Schema.Literal("free", "pro", "business").annotations({
  identifier: "Plan",
  description: "the account's plan, which sets its default rate limit"
})
export type Plan = typeof Plan.Type

/** Requests per minute of each plan (docs/api.md §1 Rate limits). */
export const PLAN_RATE_LIMITS: { readonly [P in Plan]: number } = { free: 60, pro: 600, business: 3000 }

/** A browser origin: scheme, host and optional port, no path (`https://shop.example.com`). */
export const Origin = Schema.String.pipe(
  Schema.maxLength(255),
  Schema.filter((s) => /^https?:\/\/[a-z0-9.-]+(:\d{1,5})?$/.test(s) || "must be an origin such as https://shop.example.com (lower case, no path)"),
  Schema.annotations({ identifier: "Origin", description: "`scheme://host[:port]`, lower case, no trailing slash", jsonSchema: {} })
)

export const RateLimitPerMinute = Schema.Int.pipe(
  Schema.between(1, 1_000_000, { message: () => "must be a whole number from 1 to 1000000" }),
  Schema.annotations({ description: "requests per minute, 1 to 1000000" })
)

const AllowedOrigins = Schema.Array(Origin).pipe(Schema.maxItems(100)).annotations({
  description: "the web origins publishable keys may be used from (up to 100)"
})

export const AccountLimits = Schema.Struct({
  requests_per_minute: Schema.Int.annotations({ description: "the rate limit in force: the account's own figure, else its plan's" })
}).annotations({ identifier: "AccountLimits", description: "the limits in force for the account" })

export const Account = Schema.Struct({
  id: Id("account"),
  object: ObjectType("account"),
  name: Name,
  plan: Plan,
  allowed_origins: AllowedOrigins,
  rate_limit_per_minute: Schema.NullOr(RateLimitPerMinute).annotations({
    description: "the operator's figure for this account; null = the plan's"
  }),
  limits: AccountLimits,
  reminders: Reminders,
  metadata: Metadata,
  ...Timestamps
}).annotations({ identifier: "Account" })
export type Account = typeof Account.Type

export const AccountCreate = Schema.Struct({
  name: Name,
  plan: Plan,
  allowed_origins: optional(AllowedOrigins),
  rate_limit_per_minute: optional(Schema.NullOr(RateLimitPerMinute)),
  metadata: optional(Metadata)
}).annotations({ identifier: "AccountCreate" })
export type AccountCreate = typeof AccountCreate.Type

export const AccountUpdate = Schema.Struct({
  name: optional(Name),
  plan: optional(Plan),
  allowed_origins: optional(AllowedOrigins),
  rate_limit_per_minute: optional(Schema.NullOr(RateLimitPerMinute)),
  metadata: optional(Metadata)
}).annotations({ identifier: "AccountUpdate" })
export type AccountUpdate = typeof AccountUpdate.Type

/**
 * What a credential with `keys:write` may change about its own account (PATCH /v1/account):
 * its name, the origins of its publishable keys and its reminders. The plan and the rate limit are the operator's.
 */
export const AccountSettingsUpdate = Schema.Struct({
  name: optional(Name),
  allowed_origins: optional(AllowedOrigins),
  reminders: optional(Reminders)
}).annotations({ identifier: "AccountSettingsUpdate" })
export type AccountSettingsUpdate = typeof AccountSettingsUpdate.Type

/** The limit in force for an account. */
export const requestsPerMinute = (account: { readonly plan: Plan; readonly rate_limit_per_minute: number | null }) =>
  account.rate_limit_per_minute ?? PLAN_RATE_LIMITS[account.plan]

/** The account with its `limits` recomputed from its plan and override. */
export const withLimits = <A extends Omit<Account, "limits">>(account: A): A & { readonly limits: Account["limits"] } => ({
  ...account,
  limits: { requests_per_minute: requestsPerMinute(account) }
})

/** What creating an account returns: the account and its four keys, shown once. */
export const AccountWithKeys = Schema.Struct({
  account: Account,
  keys: Schema.Struct({
    sandbox: Schema.Struct({ secret: Schema.String, publishable: Schema.String }),
    production: Schema.Struct({ secret: Schema.String, publishable: Schema.String })
  })
}).annotations({ identifier: "AccountWithKeys" })
export type AccountWithKeys = typeof AccountWithKeys.Type
