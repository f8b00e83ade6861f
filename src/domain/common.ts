/**
 * Value schemas shared by every resource: instants, wall-clock times, dates, zones, money,
 * metadata. Each is the one definition of its concept; the resources, the storage rows,
 * the HTTP bodies and the OpenAPI document all derive from these.
 */
import { ParseResult, Schema } from "effect"
import { canonicalZone, daysFromCivil } from "../scheduling/zones.js"

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(\.\d{1,9})?)?(Z|([+-])(\d{2}):(\d{2}))$/i

const isLeapYear = (y: number) => y % 4 === 0 && (y % 100 !== 0 || y % 400 === 0)
const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]

const DAY_MS = 86_400_000

/** The digit at `i` of `s`, or -1. */
const digitAt = (s: string, i: number): number => {
  const d = s.charCodeAt(i) - 48
  return d >= 0 && d <= 9 ? d : -1
}

const twoDigits = (s: string, i: number): number => {
  const a = digitAt(s, i)
  const b = digitAt(s, i + 1)
  return a < 0 || b < 0 ? -1 : a * 10 + b
}

/**
 * Epoch milliseconds of an instant in the canonical spelling `YYYY-MM-DDTHH:MM:SSZ` (or with
 * `.mmm`), read digit by digit; `undefined` for any other spelling or an impossible date or
 * time. Every stored and returned instant is spelled so, and every request sends one.
 */
const canonicalMillis = (text: string): number | undefined => {
  // Not a string at all (a test's partial record): the caller's general path answers.
  if (typeof text !== "string") return undefined
  const length = text.length
  if (
    (length !== 20 && length !== 24) || text.charCodeAt(length - 1) !== 90 /* Z */ ||
    text.charCodeAt(4) !== 45 || text.charCodeAt(7) !== 45 || text.charCodeAt(10) !== 84 /* T */ ||
    text.charCodeAt(13) !== 58 || text.charCodeAt(16) !== 58
  ) return undefined
  const century = twoDigits(text, 0)
  const yy = twoDigits(text, 2)
  const month = twoDigits(text, 5)
  const day = twoDigits(text, 8)
  const hour = twoDigits(text, 11)
  const minute = twoDigits(text, 14)
  const second = twoDigits(text, 17)
  let millis = 0
  if (length === 24) {
    const hundreds = digitAt(text, 20)
    const rest = twoDigits(text, 21)
    if (text.charCodeAt(19) !== 46 /* . */ || hundreds < 0 || rest < 0) return undefined
    millis = hundreds * 100 + rest
  }
  if (century < 0 || yy < 0 || day < 1 || hour < 0 || hour > 23 || minute < 0 || minute > 59 || second < 0 || second > 59) {
    return undefined
  }
  const year = century * 100 + yy
  if (month < 1 || month > 12 || day > (month === 2 && isLeapYear(year) ? 29 : DAYS_IN_MONTH[month - 1]!)) return undefined
  return daysFromCivil(year, month, day) * DAY_MS + ((hour * 60 + minute) * 60 + second) * 1000 + millis
}

/**
 * Parses an RFC 3339 instant to epoch milliseconds; `undefined` if malformed or impossible
 * (Feb 30, 24:00, a 60th second). Fractions past milliseconds are truncated. Plain arithmetic
 * on the matched fields: every request body's instants pass through here.
 */
export const parseInstant = (text: string): number | undefined => {
  const canonical = canonicalMillis(text)
  if (canonical !== undefined) return canonical
  const m = RFC3339.exec(text)
  if (m === null) return undefined
  const year = Number(m[1])
  const month = Number(m[2])
  const day = Number(m[3])
  const hour = Number(m[4])
  const minute = Number(m[5])
  const second = m[6] === undefined ? 0 : Number(m[6])
  if (month < 1 || month > 12 || day < 1 || hour > 23 || minute > 59 || second > 59) return undefined
  if (day > (month === 2 && isLeapYear(year) ? 29 : DAYS_IN_MONTH[month - 1]!)) return undefined
  let offset = 0
  if (m[9] !== undefined) {
    const offsetHours = Number(m[10])
    const offsetMinutes = Number(m[11])
    if (offsetHours > 23 || offsetMinutes > 59) return undefined
    offset = (m[9] === "-" ? -1 : 1) * (offsetHours * 60 + offsetMinutes) * 60_000
  }
  const millis = m[7] === undefined ? 0 : Number(m[7].slice(1, 4).padEnd(3, "0"))
  return daysFromCivil(year, month, day) * 86_400_000 + ((hour * 60 + minute) * 60 + second) * 1000 + millis - offset
}

/** Years 0000–9999, the range where `YYYY-MM-DD` has four digits. */
const FIRST_DAY = -719_528
const LAST_DAY = 2_932_896
const datePrefixes = new Map<number, string>()
const pad2 = (n: number) => (n < 10 ? `0${n}` : `${n}`)

/**
 * The canonical text of an instant: UTC with `Z`, milliseconds only when present. Slot lists
 * format tens of thousands of instants on few days, so the date part is cached per day.
 */
export const formatInstant = (ms: number): string => {
  const day = Math.floor(ms / DAY_MS)
  if (day < FIRST_DAY || day > LAST_DAY || !Number.isInteger(ms)) {
    const iso = new Date(ms).toISOString()
    return iso.endsWith(".000Z") ? `${iso.slice(0, 19)}Z` : iso
  }
  let prefix = datePrefixes.get(day)
  if (prefix === undefined) {
    if (datePrefixes.size > 20_000) datePrefixes.clear()
    prefix = new Date(day * DAY_MS).toISOString().slice(0, 11)
    datePrefixes.set(day, prefix)
  }
  let rest = ms - day * DAY_MS
  const millis = rest % 1000
  rest = (rest - millis) / 1000
  const seconds = rest % 60
  rest = (rest - seconds) / 60
  const minutes = rest % 60
  const hours = (rest - minutes) / 60
  const time = `${pad2(hours)}:${pad2(minutes)}:${pad2(seconds)}`
  return millis === 0 ? `${prefix}${time}Z` : `${prefix}${time}.${String(millis).padStart(3, "0")}Z`
}

/**
 * Marks a transformation whose encode hands back its input as it is, so that encoding a
 * value through it changes nothing (what answers may skip: adapters/http/handlers/encoded.ts).
 */
export const EncodesUnchanged: unique symbol = Symbol.for("slotwise/EncodesUnchanged")

/**
 * An RFC 3339 instant. Accepts any offset on input and normalises to UTC `Z`, so every
 * stored and returned instant has one spelling and compares as text in time order.
 */
export const Instant = Schema.transformOrFail(Schema.String, Schema.String, {
  strict: true,
  // One parse validates and normalises.
  decode: (s, _, ast) => {
    const ms = parseInstant(s)
    return ms === undefined
      ? ParseResult.fail(new ParseResult.Type(ast, s, "must be an RFC 3339 date-time such as 2026-03-29T08:30:00Z"))
      : ParseResult.succeed(formatInstant(ms))
  },
  encode: ParseResult.succeed
}).annotations({ identifier: "Instant", description: "RFC 3339 instant, UTC (`2026-03-29T08:30:00Z`)", [EncodesUnchanged]: true })

/**
 * Epoch milliseconds of an instant already validated by {@link Instant}: its canonical
 * spelling read in place (a booking's write reads its start and end several times).
 */
export const toMillis = (instant: string): number => canonicalMillis(instant) ?? Date.parse(instant)

export const LocalTime = Schema.String.pipe(
  Schema.filter((s) => /^([01]\d|2[0-3]):[0-5]\d$/.test(s) || s === "24:00" || "must be a wall-clock time HH:MM"),
  Schema.annotations({
    identifier: "LocalTime",
    description: "wall-clock time `HH:MM` (24:00 = end of day)",
    jsonSchema: { pattern: "^(?:[01]\\d|2[0-3]):[0-5]\\d$|^24:00$" }
  })
)

/** Minutes since local midnight of a validated `HH:MM`. */
export const minutesOfDay = (time: string): number => Number(time.slice(0, 2)) * 60 + Number(time.slice(3, 5))

export const isLocalDate = (s: string): boolean => {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(s)
  if (m === null) return false
  const probe = new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])))
  return probe.getUTCFullYear() === Number(m[1]) && probe.getUTCMonth() === Number(m[2]) - 1 &&
    probe.getUTCDate() === Number(m[3])
}

export const LocalDate = Schema.String.pipe(
  Schema.filter((s) => isLocalDate(s) || "must be a calendar date YYYY-MM-DD"),
  Schema.annotations({ identifier: "LocalDate", description: "calendar date `YYYY-MM-DD`", jsonSchema: { format: "date" } })
)

/** Whether `s` names an IANA zone, in any case. */
export const isTimeZone = (s: string): boolean => canonicalZone(s) !== undefined

export const TimeZone = Schema.String.pipe(
  Schema.filter((s) => isTimeZone(s) || "must be an IANA time zone such as Europe/Berlin"),
  Schema.annotations({ identifier: "TimeZone", description: "IANA time zone name such as `Europe/Berlin`", jsonSchema: {} }),
  // Decoding spells the zone in its canonical case, so it is stored and returned that way.
  (zone) => Schema.transform(zone, Schema.typeSchema(zone), { strict: true, decode: (s) => canonicalZone(s)!, encode: (s) => s })
)

export const Currency = Schema.String.pipe(
  Schema.pattern(/^[A-Z]{3}$/, { message: () => "must be an ISO 4217 code such as EUR" }),
  Schema.annotations({ description: "ISO 4217 currency code, upper case (`EUR`)" })
)

const MINOR_UNITS = "must be a non-negative integer in minor units, such as 1999 for 19.99"
export const MinorUnits = Schema.Int.pipe(
  Schema.nonNegative({ message: () => MINOR_UNITS }),
  Schema.lessThanOrEqualTo(Number.MAX_SAFE_INTEGER, { message: () => `must be at most ${Number.MAX_SAFE_INTEGER}` }),
  Schema.annotations({ description: "amount in the currency's minor units (cents): 1999 is 19.99" })
)

export const Money = Schema.Struct({ amount: MinorUnits, currency: Currency }).annotations({
  identifier: "Money",
  description: "amount in minor units (integer) and ISO 4217 currency"
})
export type Money = typeof Money.Type

/** Free string key-values, at most 50 keys (Stripe's limits on key and value length). */
export const Metadata = Schema.Record({
  key: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(40), Schema.annotations({ description: "a key, 1 to 40 characters" })),
  value: Schema.String.pipe(Schema.maxLength(500), Schema.annotations({ description: "its value, up to 500 characters" }))
}).pipe(
  Schema.filter((m) => Object.keys(m).length <= 50 || "must have at most 50 keys"),
  Schema.annotations({
    identifier: "Metadata",
    description: "your own key-value strings, kept and returned as given: at most 50 keys of up to 40 characters, values up to 500",
    jsonSchema: { maxProperties: 50 }
  })
)
export type Metadata = typeof Metadata.Type

export const NUL_OR_SURROGATE_MESSAGE = "must not contain a NUL character or an unpaired surrogate"

/** A UTF-16 surrogate not part of a pair (JSON's `"\ud800"` decodes to one). */
const LONE_SURROGATE = "[\\ud800-\\udbff](?![\\udc00-\\udfff])|(?<![\\ud800-\\udbff])[\\udc00-\\udfff]"
const UNSTORABLE = new RegExp(`\\u0000|${LONE_SURROGATE}`)
const LONE_SURROGATES = new RegExp(LONE_SURROGATE, "g")

/**
 * Whether `text` holds a character no text field accepts: U+0000, which PostgreSQL stores in
 * neither text nor jsonb, or an unpaired surrogate, which is no character at all and leaves a
 * PostgreSQL document unreadable (`doc -> 'field'` fails on it). Emoji (paired) are text.
 * Every input is checked with it once (validation.ts); schemas used alone check it too.
 */
export const containsNulOrLoneSurrogate = (text: string): boolean => UNSTORABLE.test(text)

/** `text` with U+FFFD for each unpaired surrogate: how text stored before the rule is repaired. */
export const replaceLoneSurrogates = (text: string): string => text.replace(LONE_SURROGATES, "\ufffd")

const withoutNulOrLoneSurrogate = (s: string) => !containsNulOrLoneSurrogate(s) || NUL_OR_SURROGATE_MESSAGE

export const Name = Schema.String.pipe(
  Schema.filter((s) => s.trim().length > 0 || "must not be empty"),
  Schema.filter(withoutNulOrLoneSurrogate),
  Schema.maxLength(200),
  Schema.annotations({ description: "name as people see it, 1 to 200 characters" })
)
/** The shape of an email address and of a phone number, wherever one is checked. */
export const EMAIL_PATTERN = /^[^\s@]+@[^\s@]+\.[^\s@]+$/
export const PHONE_PATTERN = /^\+?[0-9 ()\-.]{3,32}$/

export const Email = Schema.String.pipe(
  Schema.maxLength(254),
  Schema.pattern(EMAIL_PATTERN, { message: () => "must be an email address" }),
  Schema.annotations({ description: "email address" })
)
export const Phone = Schema.String.pipe(
  Schema.pattern(PHONE_PATTERN, { message: () => "must be a phone number" }),
  Schema.annotations({ description: "phone number: digits, spaces, `()-.`, optionally a leading `+`" })
)
export const Text = (max: number) =>
  Schema.String.pipe(
    Schema.maxLength(max),
    Schema.filter(withoutNulOrLoneSurrogate),
    Schema.annotations({ description: `free text, at most ${max} characters` })
  )

export const Minutes = (max: number) =>
  Schema.Int.pipe(
    Schema.between(0, max, { message: () => `must be a whole number from 0 to ${max}` }),
    Schema.annotations({ description: `minutes, 0 to ${max}` })
  )
export const PositiveMinutes = (max: number) =>
  Schema.Int.pipe(
    Schema.between(1, max, { message: () => `must be a whole number from 1 to ${max}` }),
    Schema.annotations({ description: `minutes, 1 to ${max}` })
  )

/** The `object` member of a resource: its type's name, always the same. */
export const ObjectType = <const Name extends string>(name: Name) =>
  Schema.Literal(name).annotations({ description: `the type of this object: always \`${name}\`` })

export const Environment = Schema.Literal("sandbox", "production")
export type Environment = typeof Environment.Type

/** Fields every resource carries (docs/api.md §1). */
export const Timestamps = {
  created_at: Instant.annotations({ description: "when it was created (RFC 3339, UTC)" }),
  updated_at: Instant.annotations({ description: "when it last changed (RFC 3339, UTC)" })
}

/** Every field optional (absent, never `undefined`): create and update inputs derive from the fields. */
export const optionalFields = <F extends { readonly [k: string]: Schema.Schema.All }>(
  fields: F
): { readonly [K in keyof F]: Schema.optionalWith<F[K], { exact: true }> } =>
  Object.fromEntries(
    Object.entries(fields).map(([key, schema]) => [key, Schema.optionalWith(schema, { exact: true })])
  ) as any

/** An optional field that is absent rather than `undefined` when not given. */
export const optional = <S extends Schema.Schema.All>(schema: S) => Schema.optionalWith(schema, { exact: true })
