/**
 * Custom domains (docs/api.md §10): a hostname an account proves it controls with a TXT
 * record, after which requests for that hostname act for the account's environment and its
 * `https://` origin counts as allowed for the environment's publishable keys.
 */
import { Schema } from "effect"
import { Instant, ObjectType, Timestamps } from "../domain/common.js"
import { Id } from "../domain/ids.js"

/** Plans that may add custom domains. */
export const DOMAIN_PLANS = ["pro", "business"] as const

const LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/
const MAX_HOSTNAME = 253

/**
 * Why `text` is not a hostname a domain may have, or `undefined` when it is one: lower-case
 * ASCII (an internationalised name in its `xn--` form), labels of 1–63 letters, digits and
 * inner hyphens, at least two labels, at most 253 characters, no port, no trailing dot, and
 * not an IP address (the last label is never all digits).
 */
export const hostnameProblem = (text: string): string | undefined => {
  if (text.length === 0) return "must not be empty"
  if (text.length > MAX_HOSTNAME) return `must be at most ${MAX_HOSTNAME} characters`
  // Non-ASCII first: a Unicode name gets the hint to send its punycode form.
  if (/[^\x20-\x7e]/.test(text)) {
    return "must be ASCII: write an internationalised name in its punycode form (xn--…), with no control characters"
  }
  if (/\s/.test(text)) return "must not contain spaces"
  if (/[A-Z]/.test(text)) return "must be lower case"
  if (text.includes("/") || text.includes("@") || text.includes("?") || text.includes("#")) {
    return "must be a bare hostname such as book.example.com (no scheme, path or user)"
  }
  if (text.includes(":") || text.startsWith("[")) return "must be a hostname without a port (and not an IPv6 address)"
  if (text.endsWith(".")) return "must not end with a dot"
  const labels = text.split(".")
  if (labels.length < 2) return "must have at least two labels (book.example.com)"
  for (const label of labels) {
    if (label.length === 0) return "must not have empty labels (two dots in a row)"
    if (label.length > 63) return "must have labels of at most 63 characters"
    if (!LABEL.test(label)) return "labels may hold only a-z, 0-9 and inner hyphens"
  }
  if (/^\d+$/.test(labels[labels.length - 1]!)) return "must be a hostname, not an IP address"
  return undefined
}

export const Hostname = Schema.String.pipe(
  Schema.filter((s) => hostnameProblem(s) ?? true),
  Schema.annotations({
    identifier: "Hostname",
    description: "a lower-case hostname with at least two labels (`book.example.com`); an internationalised name in its " +
      "punycode form (`xn--…`); no scheme, port or path",
    jsonSchema: { type: "string", maxLength: MAX_HOSTNAME }
  })
)

export const DomainStatus = Schema.Literal("pending", "verified").annotations({
  identifier: "DomainStatus",
  description: "`pending` until the TXT record is found by `verify`; then `verified`"
})
export type DomainStatus = typeof DomainStatus.Type

/** The TXT record prefix: the record lives at `_slotwise.<hostname>`. */
export const VERIFICATION_LABEL = "_slotwise"
export const VERIFICATION_PREFIX = "slotwise-verification="

export const DomainVerification = Schema.Struct({
  type: Schema.Literal("TXT").annotations({ description: "the DNS record type to create" }),
  name: Schema.String.annotations({ description: "the record's name: `_slotwise.<hostname>`" }),
  value: Schema.String.annotations({ description: "the record's exact value: `slotwise-verification=…`" })
}).annotations({ identifier: "DomainVerification", description: "the DNS record that proves control of the hostname" })

export const Domain = Schema.Struct({
  id: Id("domain"),
  object: ObjectType("domain"),
  hostname: Hostname,
  status: DomainStatus,
  verification: DomainVerification,
  ...Timestamps,
  verified_at: Schema.NullOr(Instant).annotations({ description: "when `verify` found the record; null while pending" })
}).annotations({ identifier: "Domain" })
export type Domain = typeof Domain.Type

export const DomainCreate = Schema.Struct({ hostname: Hostname }).annotations({ identifier: "DomainCreate" })
export type DomainCreate = typeof DomainCreate.Type

export const verificationName = (hostname: string): string => `${VERIFICATION_LABEL}.${hostname}`

/** The expected record's value: 128 random bits, hex. */
export const newVerificationValue = (): string => {
  const bytes = new Uint8Array(16)
  globalThis.crypto.getRandomValues(bytes)
  return VERIFICATION_PREFIX + Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("")
}

/**
 * The hostname of a browser origin that could be a custom domain: `https://` and a host
 * without a port (a custom domain is served on 443 only); `undefined` for anything else.
 */
export const customDomainOfOrigin = (origin: string): string | undefined => {
  const match = /^https:\/\/([a-z0-9.-]+)$/.exec(origin)
  return match === null ? undefined : match[1]
}

/** The origin a verified custom domain implies. */
export const originOfCustomDomain = (hostname: string): string => `https://${hostname}`

/**
 * A `Host` header value as a hostname to look up: lower case, without the port and a
 * trailing dot; `undefined` when it cannot be a custom domain.
 */
export const hostOfHeader = (value: string | undefined): string | undefined => {
  if (value === undefined) return undefined
  const host = value.trim().toLowerCase().replace(/:\d*$/, "").replace(/\.$/, "")
  return hostnameProblem(host) === undefined ? host : undefined
}
