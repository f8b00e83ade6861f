/**
 * Accounts (docs/api.md §2, §5): who owns data. Every account has a plan, the browser origins its
 * publishable keys may be used from, an optional operator-set rate limit, and two isolated
 * environments (`sandbox`, `production`) that share nothing but the account itself.
 */
import { Schema } from "effect"
import { Metadata, Name, ObjectType, optional, Timestamps } from "../domain/common.js"
import { Id } from "../domain/ids.js"
import { Reminders } from "../reminders/reminder.js"

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
  Schema.filter((s) =>
    /^https?:\/\/[a-z0-9.-]+(:\d{1,5})?$/.test(s) || "must be an origin such as https://shop.example.com (lower case, no path)"
  ),
  Schema.annotations({ identifier: "Origin", description: "`scheme://host[:port]`, lower case, no trailing slash", jsonSchema: {} })
)

export const RateLimitPerMinute = Schema.Int.pipe(
  Schema.between(1, 1_000_000, { message: () => "must be a whole number from 1 to 1000000" }),
  Schema.annotations({ description: "requests per minute, 1 to 1000000" })
)

const AllowedOrigins = Schema.Array(Origin).pipe(Schema.maxItems(100)).annotations({
  description: "the web origins publishable keys may be used from (up to 100)"
})

/**
 * An account's handle: the slug of its hosted booking page (`/book/{handle}`). Lower-case
 * letters, digits and inner hyphens, 3 to 40 characters, unique across all accounts, and not a
 * word the server's own paths use or one that could pass for the server's operator.
 */
export const HANDLE_PATTERN = /^[a-z0-9](?:[a-z0-9-]{1,38}[a-z0-9])?$/
export const HANDLE_MIN_LENGTH = 3
export const HANDLE_MAX_LENGTH = 40
/** Words no account may take: the server's own paths, and names a visitor would take for its operator's. */
export const RESERVED_HANDLES: ReadonlySet<string> = new Set([
  "admin",
  "api",
  "v1",
  "book",
  "manage",
  "docs",
  "widget",
  "oauth",
  "www",
  "health",
  "static",
  "assets",
  "calendar",
  "tls",
  "account",
  "accounts",
  "login",
  "logout",
  "signup",
  "settings",
  "help",
  "support",
  "status",
  "well-known",
  "administrator",
  "root",
  "security",
  "billing",
  "signin",
  "sign-in",
  "sign-up",
  "console",
  "dashboard",
  "abuse",
  "postmaster",
  "hostmaster",
  "webmaster",
  "system",
  "official",
  "noreply",
  "no-reply"
])
/** Any handle with this in it (`slotwise-support`, `help-slotwise`) could pass for the operator's. */
const OPERATOR_NAME = "slotwise"

/** What is wrong with the shape of `handle`, or `undefined`: stored handles and lookups are held to this alone. */
export const handleShapeProblem = (handle: string): string | undefined =>
  handle.length < HANDLE_MIN_LENGTH || handle.length > HANDLE_MAX_LENGTH || !HANDLE_PATTERN.test(handle)
    ? `must be ${HANDLE_MIN_LENGTH} to ${HANDLE_MAX_LENGTH} lower-case letters, digits and hyphens, starting and ending with a letter or digit`
    : undefined

/**
 * What is wrong with `handle` as a new account handle, or `undefined` when it is a usable one.
 * An account that has a handle reserved since it took it keeps it (see {@link StoredHandle}).
 */
export const handleProblem = (handle: string): string | undefined => {
  const shape = handleShapeProblem(handle)
  if (shape !== undefined) return shape
  if (RESERVED_HANDLES.has(handle)) return `${handle} is reserved for this server's own pages and its operator`
  if (handle.includes(OPERATOR_NAME))
    return `${handle} is reserved: a handle with "${OPERATOR_NAME}" in it could pass for this server's operator`
  return undefined
}

/** An account's handle as stored and shown: the shape alone, so a word reserved later never makes an account unreadable. */
export const StoredHandle = Schema.String.pipe(
  Schema.filter((s) => handleShapeProblem(s) ?? true),
  Schema.annotations({
    identifier: "StoredHandle",
    description: "the account's hosted page slug: 3 to 40 of `a-z`, `0-9` and inner `-`, unique",
    jsonSchema: { type: "string", minLength: HANDLE_MIN_LENGTH, maxLength: HANDLE_MAX_LENGTH, pattern: HANDLE_PATTERN.source }
  })
)

/** A handle an account chooses: well shaped, and not reserved. */
export const Handle = StoredHandle.pipe(
  Schema.filter((s) => handleProblem(s) ?? true),
  Schema.annotations({
    identifier: "Handle",
    description: "the account's hosted page slug: 3 to 40 of `a-z`, `0-9` and inner `-`, unique, not a reserved word"
  })
)

/** How long a handle an account gave up stays its own: its pages redirect, and no other account may take it. */
export const HANDLE_HOLD_DAYS = 30

/**
 * The slug a name suggests (`Default account` → `default-account`), cut to leave room for a
 * `-N` suffix, or `undefined` when the name has too few usable letters.
 */
export const handleBaseOf = (name: string): string | undefined => {
  const slug = name.normalize("NFKD").replace(/[\u0300-\u036f]/g, "").toLowerCase()
    .replace(/[^a-z0-9]+/g, "-").replace(/^-+|-+$/g, "").slice(0, HANDLE_MAX_LENGTH - 4).replace(/-+$/, "")
  // A reserved slug still serves as a base: its `-2` is free to use.
  return slug.length >= HANDLE_MIN_LENGTH && HANDLE_PATTERN.test(slug) ? slug : undefined
}

/** `base`, then `base-2`, `base-3` …: the `attempt`-th candidate (attempt 1 is the base). */
export const handleCandidate = (base: string, attempt: number): string => (attempt <= 1 ? base : `${base}-${attempt}`)

const HANDLE_ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789"
/** A short random handle for names that give none: `a` and 7 random characters (36^7 choices). */
export const randomHandle = (): string => {
  const bytes = crypto.getRandomValues(new Uint8Array(7))
  return `a${Array.from(bytes, (b) => HANDLE_ALPHABET[b % HANDLE_ALPHABET.length]).join("")}`
}

/** Plans that may hide "Powered by Slotwise". */
export const BRANDING_PLANS: ReadonlyArray<Plan> = ["pro", "business"]

export const DisplayName = Schema.String.pipe(
  Schema.filter((s) => s.trim().length > 0 || "must not be empty"),
  Schema.filter((s) => !/[\u0000-\u001f\u007f]/.test(s) || "must not contain control characters"),
  Schema.maxLength(80, { message: () => "must be at most 80 characters" }),
  Schema.annotations({ description: "the name hosted pages and the widget show, 1 to 80 characters" })
)

/** What is wrong with `url` as a logo address, or `undefined` when it is usable. */
export const logoUrlProblem = (url: string): string | undefined => {
  if (url.length > 2000) return "must be at most 2000 characters"
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    return "must be an absolute https:// URL"
  }
  if (parsed.protocol !== "https:") return "must be an https:// URL"
  if (parsed.username !== "" || parsed.password !== "") return "must not carry a user name or password"
  if (/[\s"'<>\\]/.test(url)) return "must not contain spaces, quotes, angle brackets or backslashes"
  return undefined
}

export const LogoUrl = Schema.String.pipe(
  Schema.filter((s) => logoUrlProblem(s) ?? true),
  Schema.annotations({
    description: "an https:// image URL, at most 2000 characters, without credentials",
    jsonSchema: { type: "string", format: "uri", maxLength: 2000 }
  })
)

export const PrimaryColor = Schema.String.pipe(
  Schema.filter((s) => /^#(?:[0-9a-fA-F]{3}|[0-9a-fA-F]{6})$/.test(s) || "must be a colour as #rgb or #rrggbb"),
  Schema.annotations({
    description: "`#rgb` or `#rrggbb`",
    jsonSchema: { type: "string", pattern: "^#(?:[0-9a-fA-F]{3}|[0-9a-fA-F]{6})$" }
  })
)

export const Branding = Schema.Struct({
  display_name: Schema.NullOr(DisplayName),
  logo_url: Schema.NullOr(LogoUrl),
  primary_color: Schema.NullOr(PrimaryColor),
  hide_powered_by: Schema.Boolean.annotations({
    description: "hide \"Powered by Slotwise\" (pro and business; kept but without effect on free)"
  })
}).annotations({ identifier: "Branding", description: "what hosted pages, manage pages and the widget show by default" })
export type Branding = typeof Branding.Type

export const NO_BRANDING: Branding = { display_name: null, logo_url: null, primary_color: null, hide_powered_by: false }

/** A change of branding: the fields given replace the stored ones, `null` clears one. */
export const BrandingUpdate = Schema.Struct({
  display_name: optional(Schema.NullOr(DisplayName)),
  logo_url: optional(Schema.NullOr(LogoUrl)),
  primary_color: optional(Schema.NullOr(PrimaryColor)),
  hide_powered_by: optional(Schema.NullOr(Schema.Boolean))
}).annotations({ identifier: "BrandingUpdate", description: "fields to change; the others stay, `null` clears one" })
export type BrandingUpdate = typeof BrandingUpdate.Type

/** The stored branding with `update` merged in. */
export const mergeBranding = (current: Branding, update: BrandingUpdate): Branding => ({
  display_name: update.display_name === undefined ? current.display_name : update.display_name,
  logo_url: update.logo_url === undefined ? current.logo_url : update.logo_url,
  primary_color: update.primary_color === undefined ? current.primary_color : update.primary_color,
  hide_powered_by: update.hide_powered_by === undefined ? current.hide_powered_by : update.hide_powered_by ?? false
})

/** Whether "Powered by Slotwise" shows: always on free, whatever a downgraded account once chose. */
export const showsPoweredBy = (account: { readonly plan: Plan; readonly branding: Branding }): boolean =>
  !(BRANDING_PLANS.includes(account.plan) && account.branding.hide_powered_by)

export const AccountLimits = Schema.Struct({
  requests_per_minute: Schema.Int.annotations({ description: "the rate limit in force: the account's own figure, else its plan's" })
}).annotations({ identifier: "AccountLimits", description: "the limits in force for the account" })

export const Account = Schema.Struct({
  id: Id("account"),
  object: ObjectType("account"),
  name: Name,
  handle: StoredHandle,
  plan: Plan,
  allowed_origins: AllowedOrigins,
  branding: Branding,
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
  handle: optional(Handle),
  plan: Plan,
  allowed_origins: optional(AllowedOrigins),
  rate_limit_per_minute: optional(Schema.NullOr(RateLimitPerMinute)),
  metadata: optional(Metadata)
}).annotations({ identifier: "AccountCreate" })
export type AccountCreate = typeof AccountCreate.Type

export const AccountUpdate = Schema.Struct({
  name: optional(Name),
  handle: optional(Handle),
  plan: optional(Plan),
  allowed_origins: optional(AllowedOrigins),
  branding: optional(BrandingUpdate),
  rate_limit_per_minute: optional(Schema.NullOr(RateLimitPerMinute)),
  metadata: optional(Metadata)
}).annotations({ identifier: "AccountUpdate" })
export type AccountUpdate = typeof AccountUpdate.Type

/**
 * What a credential with `keys:write` may change about its own account (PATCH /v1/account):
 * its name, handle, branding, reminders and the origins of its publishable keys. The plan and the rate
 * limit are the operator's.
 */
export const AccountSettingsUpdate = Schema.Struct({
  name: optional(Name),
  handle: optional(Handle),
  allowed_origins: optional(AllowedOrigins),
  branding: optional(BrandingUpdate),
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
