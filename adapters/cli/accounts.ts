/**
 * `slotwise accounts create | list | update`: accounts, offline (a server may be running on
 * the same database), through the core's `Accounts` use cases.
 */
import { Effect } from "effect"
import { Accounts } from "../../src/accounts/Accounts.js"
import type { Account, AccountWithKeys } from "../../src/accounts/account.js"
import { flagLines, type FlagSpec, type FlagSpecs, parseFlags, UsageError } from "./flags.js"
import { type OfflineLayer, out, printHelp, runOffline } from "./offline.js"
import { DATABASE, describeStorage, type StorageFlag, storageFlag } from "./storage.js"

const ACCOUNT_FIELDS = {
  name: { type: "string", value: "<name>", help: "the account's name" },
  plan: { type: "string", value: "<plan>", help: "free | pro | business" },
  "allowed-origin": {
    type: "string",
    multiple: true,
    value: "<origin>",
    help: "a web origin its publishable keys may be used from (https://shop.example.com); repeat for several"
  },
  "rate-limit": { type: "string", value: "<n>", help: "requests per minute, overriding the plan's figure" },
  handle: { type: "string", value: "<handle>", help: "its hosted page's slug, unique (default: from the name)" }
} as const satisfies FlagSpecs

/** Branding flags; an empty value clears the field. */
const BRANDING_FIELDS = {
  "display-name": { type: "string", value: "<name>", help: "the name hosted pages and the widget show (\"\" clears it)" },
  "logo-url": { type: "string", value: "<url>", help: "an https:// logo image (\"\" clears it)" },
  "primary-color": { type: "string", value: "<#rrggbb>", help: "the default primary colour, #rgb or #rrggbb (\"\" clears it)" },
  "hide-powered-by": { type: "string", value: "<true|false>", help: "hide \"Powered by Slotwise\" (pro and business)" }
} as const satisfies FlagSpecs

const JSON_FLAG: FlagSpec = { type: "boolean", help: "print JSON instead of text" }

const CREATE_FLAGS = {
  database: DATABASE,
  ...ACCOUNT_FIELDS,
  name: { ...ACCOUNT_FIELDS.name, help: "the account's name (required)" },
  plan: { ...ACCOUNT_FIELDS.plan, help: "free | pro | business (default free)" },
  json: { ...JSON_FLAG, help: "print {account, keys} as JSON" }
} as const satisfies FlagSpecs

const LIST_FLAGS = { database: DATABASE, json: { ...JSON_FLAG, help: "print the accounts as a JSON array" } } as const satisfies FlagSpecs

const UPDATE_FLAGS = {
  database: DATABASE,
  ...ACCOUNT_FIELDS,
  "allowed-origin": { ...ACCOUNT_FIELDS["allowed-origin"], help: `${ACCOUNT_FIELDS["allowed-origin"].help}; replaces the list` },
  "no-allowed-origins": { type: "boolean", help: "clear the allowed origins" },
  "rate-limit": { type: "string", value: "<n|plan>", help: "requests per minute; `plan` returns to the plan's figure" },
  ...BRANDING_FIELDS,
  json: { ...JSON_FLAG, help: "print the account as JSON" }
} as const satisfies FlagSpecs

export const ACCOUNTS_CREATE_HELP = `slotwise accounts create --name <name> [options]: create an account offline and print its keys

${flagLines(CREATE_FLAGS)}
`

export const ACCOUNTS_LIST_HELP = `slotwise accounts list [options]: list the accounts, with their plans and allowed origins

${flagLines(LIST_FLAGS)}
`

export const ACCOUNTS_UPDATE_HELP = `slotwise accounts update <acc_…> [options]: change an account offline

${flagLines(UPDATE_FLAGS)}
`

export const ACCOUNTS_HELP = `slotwise accounts <command>: accounts, offline (the server may be running)

Commands:
  create   create an account and print its keys (shown once)
  list     list the accounts
  update   change an account's name, plan, allowed origins or rate limit

Run slotwise accounts <command> --help for its options.
`

export const printKeys = (created: AccountWithKeys, write: (line: string) => void) => {
  write(`Created account ${created.account.id} (${created.account.name}, plan ${created.account.plan}).`)
  write("Its keys are shown now and never again:")
  write(`  sandbox secret key       ${created.keys.sandbox.secret}`)
  write(`  sandbox publishable key  ${created.keys.sandbox.publishable}`)
}

/** Runs an `Accounts` use case on `storage`; prints its failure (naming the storage) and returns the exit code. */
const withAccounts = <A>(
  storage: StorageFlag,
  layer: OfflineLayer,
  use: (accounts: Accounts) => Effect.Effect<A, unknown>,
  print: (value: A) => void
): Promise<number> => runOffline(layer(storage), describeStorage(storage), Effect.flatMap(Accounts, use), print)

const rateLimitOf = (text: string): number | null => text === "plan" ? null : Number(text)

/** The account fields the flags set (an invalid value is left for the core's validation to report). */
const accountFields = (values: {
  readonly name?: string | undefined
  readonly plan?: string | undefined
  readonly "allowed-origin"?: Array<string> | undefined
  readonly "rate-limit"?: string | undefined
  readonly handle?: string | undefined
}) => ({
  ...(values.name !== undefined ? { name: values.name } : {}),
  ...(values.handle !== undefined ? { handle: values.handle } : {}),
  ...(values.plan !== undefined ? { plan: values.plan as "free" } : {}),
  ...(values["allowed-origin"] !== undefined ? { allowed_origins: values["allowed-origin"] } : {}),
  ...(values["rate-limit"] !== undefined ? { rate_limit_per_minute: rateLimitOf(values["rate-limit"]) } : {})
})

const clearable = (text: string | undefined) => (text === undefined ? {} : { value: text === "" ? null : text })

/** The branding the flags change, or nothing when none is given. */
const brandingFields = (values: { readonly [K in keyof typeof BRANDING_FIELDS]?: string | undefined }) => {
  const hide = values["hide-powered-by"]
  if (hide !== undefined && !/^(true|false)$/.test(hide)) throw new UsageError(`--hide-powered-by must be true or false, got ${hide}`)
  const entries = [
    ["display_name", clearable(values["display-name"])],
    ["logo_url", clearable(values["logo-url"])],
    ["primary_color", clearable(values["primary-color"])],
    ["hide_powered_by", hide === undefined ? {} : { value: hide === "true" }]
  ] as const
  const branding = Object.fromEntries(entries.flatMap(([field, given]) => ("value" in given ? [[field, given.value]] : [])))
  return Object.keys(branding).length === 0 ? {} : { branding }
}

const accountLine = (account: Account): string =>
  [
    account.id,
    JSON.stringify(account.name),
    `plan ${account.plan}`,
    `${account.limits.requests_per_minute}/min${account.rate_limit_per_minute === null ? "" : " (own figure)"}`,
    `origins ${account.allowed_origins.length === 0 ? "none" : account.allowed_origins.join(" ")}`,
    `handle ${account.handle}`
  ].join("  ")

const createAccount = (args: ReadonlyArray<string>, env: NodeJS.ProcessEnv, layer: OfflineLayer): Promise<number> | number => {
  const { values, source } = parseFlags(CREATE_FLAGS, args, env)
  if (values.help) return printHelp(ACCOUNTS_CREATE_HELP)
  if (values.name === undefined) throw new UsageError("--name is required")
  const storage = storageFlag(values.database, env, source("database"))
  return withAccounts(
    storage,
    layer,
    (accounts) => accounts.create({ plan: "free", ...accountFields(values), name: values.name! }),
    (created) => {
      if (values.json) return out(JSON.stringify(created, null, 2))
      out(`In ${describeStorage(storage)}:`)
      printKeys(created, out)
      out(`  production secret key    ${created.keys.production.secret}`)
      out(`  production publishable   ${created.keys.production.publishable}`)
    }
  )
}

const listAccounts = (args: ReadonlyArray<string>, env: NodeJS.ProcessEnv, layer: OfflineLayer): Promise<number> | number => {
  const { values, source } = parseFlags(LIST_FLAGS, args, env)
  if (values.help) return printHelp(ACCOUNTS_LIST_HELP)
  const storage = storageFlag(values.database, env, source("database"))
  return withAccounts(storage, layer, (accounts) => accounts.list, (all) => {
    if (values.json) return out(JSON.stringify(all, null, 2))
    out(`${all.length === 0 ? "No accounts" : `${all.length} account(s)`} in ${describeStorage(storage)}${all.length === 0 ? "" : ":"}`)
    for (const account of all) out(`  ${accountLine(account)}`)
  })
}

const updateAccount = (args: ReadonlyArray<string>, env: NodeJS.ProcessEnv, layer: OfflineLayer): Promise<number> | number => {
  const { positionals, values, source } = parseFlags(UPDATE_FLAGS, args, env, true)
  if (values.help) return printHelp(ACCOUNTS_UPDATE_HELP)
  const [id, ...extra] = positionals
  if (id === undefined || extra.length > 0) throw new UsageError("give one account id: slotwise accounts update <acc_…> [options]")
  if (values["no-allowed-origins"] && values["allowed-origin"] !== undefined) {
    throw new UsageError("give --allowed-origin or --no-allowed-origins, not both")
  }
  const patch = { ...accountFields(values), ...brandingFields(values), ...(values["no-allowed-origins"] ? { allowed_origins: [] } : {}) }
  if (Object.keys(patch).length === 0) {
    throw new UsageError(
      "nothing to change: give --name, --handle, --plan, --allowed-origin, --no-allowed-origins, --rate-limit or a branding option"
    )
  }
  const storage = storageFlag(values.database, env, source("database"))
  return withAccounts(storage, layer, (accounts) => accounts.update(id, patch), (account) => {
    if (values.json) return out(JSON.stringify(account, null, 2))
    out(`Updated in ${describeStorage(storage)}:`)
    out(`  ${accountLine(account)}`)
  })
}

export const ACCOUNTS_COMMANDS = ["create", "list", "update"] as const

/** `slotwise accounts <sub> …args` (`sub` one of ACCOUNTS_COMMANDS). */
export const accountsCommand = (sub: string, args: ReadonlyArray<string>, env: NodeJS.ProcessEnv, layer: OfflineLayer) =>
  sub === "create" ? createAccount(args, env, layer) : sub === "list" ? listAccounts(args, env, layer) : updateAccount(args, env, layer)
