/**
 * `slotwise keys create | list | revoke`: an account's API keys, offline, through the core's
 * `ApiKeys` use cases, for an operator whose keys were lost (a secret is shown once, at
 * creation, and kept only as its hash: a lost one cannot be shown again, only replaced).
 */
import { Effect, Option } from "effect"
import { Accounts } from "../../src/accounts/Accounts.js"
import { ApiKeys } from "../../src/keys/ApiKeys.js"
import type { ApiKey } from "../../src/keys/apiKey.js"
import { NotFound } from "../../src/domain/errors.js"
import { MAX_LIMIT } from "../../src/domain/page.js"
import { Tenant, type TenantId } from "../../src/ports/tenant.js"
import { flagLines, type FlagSpecs, parseFlags, UsageError } from "./flags.js"
import { type OfflineLayer, out, printHelp, runOffline } from "./offline.js"
import { DATABASE, describeStorage, storageFlag } from "./storage.js"

const ACCOUNT = { type: "string", value: "<acc_…>", help: "the account (required; slotwise accounts list shows them)" } as const
const ENVIRONMENTS = ["sandbox", "production"] as const

const CREATE_FLAGS = {
  database: DATABASE,
  account: ACCOUNT,
  environment: { type: "string", value: "<env>", help: "sandbox | production (default sandbox)" },
  type: { type: "string", value: "<type>", help: "secret (servers) | publishable (the widget in browsers); default secret" },
  scopes: {
    type: "string",
    multiple: true,
    value: "<scope,…>",
    help: "what the key may do, comma-separated or repeated (bookings:read,clients:write…); default every scope its type allows"
  },
  name: { type: "string", value: "<name>", help: "the key's name (default \"created by slotwise keys create\")" },
  json: { type: "boolean", help: "print the key, with its secret, as JSON" }
} as const satisfies FlagSpecs

const LIST_FLAGS = {
  database: DATABASE,
  account: ACCOUNT,
  environment: { type: "string", value: "<env>", help: "sandbox | production (default both)" },
  json: { type: "boolean", help: "print the keys as a JSON array (never a secret)" }
} as const satisfies FlagSpecs

const REVOKE_FLAGS = {
  database: DATABASE,
  json: { type: "boolean", help: "print the revoked key as JSON" }
} as const satisfies FlagSpecs

export const KEYS_CREATE_HELP =
  `slotwise keys create --account <acc_…> [options]: create an API key offline and print its secret (shown once)

${flagLines(CREATE_FLAGS)}
`
export const KEYS_LIST_HELP = `slotwise keys list --account <acc_…> [options]: list an account's API keys (never their secrets)

${flagLines(LIST_FLAGS)}
`
export const KEYS_REVOKE_HELP = `slotwise keys revoke <key_…> [options]: revoke an API key at once, every secret of it

${flagLines(REVOKE_FLAGS)}
`
export const KEYS_HELP = `slotwise keys <command>: an account's API keys, offline (the server may be running)

Commands:
  create   create a key and print its secret (shown once: a lost secret is replaced, never shown again)
  list     list an account's keys, without their secrets
  revoke   revoke a key

Run slotwise keys <command> --help for its options.
`

export const KEYS_COMMANDS = ["create", "list", "revoke"] as const

const environmentOf = (source: string, text: string | undefined) => {
  if (text === undefined || (ENVIRONMENTS as ReadonlyArray<string>).includes(text)) return text as typeof ENVIRONMENTS[number] | undefined
  throw new UsageError(`${source} must be sandbox or production, got ${text}`)
}

/** The account, or its NotFound: keys are never made for an account that does not exist. */
const accountOf = (id: string) => Effect.flatMap(Accounts, (accounts) => accounts.get(id))

const keyLine = (key: ApiKey): string =>
  [key.id, key.environment.padEnd(10), key.type.padEnd(11), key.redacted, JSON.stringify(key.name), key.scopes.join(",")].join("  ")

const inTenant = <A, E, R>(tenant: TenantId, effect: Effect.Effect<A, E, R>) => Effect.provideService(effect, Tenant, tenant)

const create = (args: ReadonlyArray<string>, env: NodeJS.ProcessEnv, layer: OfflineLayer): Promise<number> | number => {
  const { values, source } = parseFlags(CREATE_FLAGS, args, env)
  if (values.help) return printHelp(KEYS_CREATE_HELP)
  if (values.account === undefined) throw new UsageError("--account is required")
  const environment = environmentOf("--environment", values.environment) ?? "sandbox"
  const type = values.type ?? "secret"
  if (type !== "secret" && type !== "publishable") throw new UsageError(`${source("type")} must be secret or publishable, got ${type}`)
  const scopes = values.scopes?.flatMap((s) => s.split(",")).map((s) => s.trim()).filter((s) => s !== "")
  const storage = storageFlag(values.database, env, source("database"))
  const tenant = { account_id: values.account, environment }
  const use = Effect.zipRight(
    accountOf(values.account),
    Effect.flatMap(
      ApiKeys,
      (keys) =>
        inTenant(
          tenant,
          keys.create({
            name: values.name ?? "created by slotwise keys create",
            type,
            ...(scopes === undefined ? {} : { scopes: scopes as Array<never> })
          })
        )
    )
  )
  return runOffline(layer(storage), describeStorage(storage), use, (key) => {
    if (values.json) return out(JSON.stringify(key, null, 2))
    out(`Created ${key.environment} ${key.type} key ${key.id} for ${values.account} in ${describeStorage(storage)}.`)
    out("Its secret is shown now and never again:")
    out(`  ${key.secret}`)
    out(`  scopes: ${key.scopes.join(", ")}`)
  })
}

/** Every key of the tenant, page after page. */
const allKeys = (tenant: TenantId) =>
  Effect.flatMap(ApiKeys, (keys) =>
    inTenant(
      tenant,
      Effect.gen(function*() {
        const found: Array<ApiKey> = []
        let cursor: string | undefined
        do {
          const page = yield* keys.list({ limit: MAX_LIMIT, ...(cursor === undefined ? {} : { cursor }) })
          found.push(...page.data)
          cursor = page.next_cursor ?? undefined
        } while (cursor !== undefined)
        return found
      })
    ))

const list = (args: ReadonlyArray<string>, env: NodeJS.ProcessEnv, layer: OfflineLayer): Promise<number> | number => {
  const { values, source } = parseFlags(LIST_FLAGS, args, env)
  if (values.help) return printHelp(KEYS_LIST_HELP)
  if (values.account === undefined) throw new UsageError("--account is required")
  const account = values.account
  const environments = [environmentOf("--environment", values.environment) ?? ENVIRONMENTS].flat()
  const storage = storageFlag(values.database, env, source("database"))
  const use = Effect.zipRight(
    accountOf(account),
    Effect.map(Effect.forEach(environments, (environment) => allKeys({ account_id: account, environment })), (pages) => pages.flat())
  )
  return runOffline(layer(storage), describeStorage(storage), use, (keys) => {
    if (values.json) return out(JSON.stringify(keys, null, 2))
    out(
      `${keys.length === 0 ? "No keys" : `${keys.length} key(s)`} of ${account} in ${describeStorage(storage)}${
        keys.length === 0 ? "" : ":"
      }`
    )
    for (const key of keys) out(`  ${keyLine(key)}`)
  })
}

const revoke = (args: ReadonlyArray<string>, env: NodeJS.ProcessEnv, layer: OfflineLayer): Promise<number> | number => {
  const { positionals, values, source } = parseFlags(REVOKE_FLAGS, args, env, true)
  if (values.help) return printHelp(KEYS_REVOKE_HELP)
  const [id, ...extra] = positionals
  if (id === undefined || extra.length > 0)
    throw new UsageError("give one key id: slotwise keys revoke <key_…> (slotwise keys list shows them)")
  const storage = storageFlag(values.database, env, source("database"))
  const use = Effect.flatMap(ApiKeys, (keys) =>
    Effect.flatMap(keys.tenantOf(id), (tenant) =>
      Option.match(tenant, {
        onNone: () => Effect.fail(new NotFound({ detail: `no API key ${id}` })),
        onSome: (tenant) => inTenant(tenant, keys.revoke(id))
      })))
  return runOffline(layer(storage), describeStorage(storage), use, (key) => {
    if (values.json) return out(JSON.stringify(key, null, 2))
    out(
      `Revoked ${key.environment} ${key.type} key ${key.id} (${JSON.stringify(key.name)}) in ${
        describeStorage(storage)
      }: it stops working at once.`
    )
  })
}

/** `slotwise keys <sub> …args`; undefined for a sub-command it does not know. */
export const keysCommand = (sub: string, args: ReadonlyArray<string>, env: NodeJS.ProcessEnv, layer: OfflineLayer) =>
  sub === "create"
    ? create(args, env, layer)
    : sub === "list"
    ? list(args, env, layer)
    : sub === "revoke"
    ? revoke(args, env, layer)
    : undefined
