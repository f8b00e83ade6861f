/**
 * Resource ids: a type prefix and a time-ordered random part (ULID layout: 48 bits of
 * milliseconds, 80 random bits, Crockford base32), so ids sort by creation time and never
 * collide across processes. Within one millisecond the random part increments, keeping
 * ids from one process strictly ordered.
 */
import { Schema } from "effect"

export const IdPrefixes = {
  booking: "bkg",
  client: "cli",
  service: "svc",
  staff: "stf",
  availability: "avl",
  hold: "hld",
  event: "evt",
  webhook: "whk",
  delivery: "whd",
  key: "key",
  payment: "pay",
  account: "acc",
  oauthClient: "oac",
  user: "usr",
  grant: "grt",
  domain: "dom",
  calendar: "cal",
  series: "ser"
} as const
export type IdKind = keyof typeof IdPrefixes

const ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
const RANDOM_CHARS = 16

let lastTime = -1
let lastRandom: Array<number> = []

/**
 * Random bytes drawn from the platform's CSPRNG in 4 KiB batches: one `getRandomValues`
 * call costs ~4 µs whatever its size, and every change makes two ids.
 */
const pool = new Uint8Array(4096)
let poolOffset = pool.length

const randomDigits = (): Array<number> => {
  if (poolOffset + RANDOM_CHARS > pool.length) {
    globalThis.crypto.getRandomValues(pool)
    poolOffset = 0
  }
  const digits = new Array<number>(RANDOM_CHARS)
  for (let i = 0; i < RANDOM_CHARS; i++) digits[i] = pool[poolOffset + i]! & 31
  poolOffset += RANDOM_CHARS
  return digits
}

const increment = (digits: Array<number>): Array<number> => {
  const next = digits.slice()
  for (let i = next.length - 1; i >= 0; i--) {
    if (next[i]! < 31) {
      next[i] = next[i]! + 1
      return next
    }
    next[i] = 0
  }
  return randomDigits() // 2^80 ids in one millisecond: start afresh rather than wrap.
}

/** The 10-character time part of an id made at `ms`. */
const timePart = (ms: number): string => {
  let time = ""
  let t = Math.max(0, Math.floor(ms))
  for (let i = 0; i < 10; i++) {
    time = ALPHABET[t % 32] + time
    t = Math.floor(t / 32)
  }
  return time
}

/** A new id for `kind` at time `now` (epoch ms). */
export const makeId = (kind: IdKind, now: number): string => {
  let random: Array<number>
  if (now === lastTime) random = increment(lastRandom)
  else {
    random = randomDigits()
    lastTime = now
  }
  lastRandom = random
  // Appended one by one: a mapped array and its join cost twice as much, twice per change.
  let id = `${IdPrefixes[kind]}_${timePart(now)}`
  for (let i = 0; i < random.length; i++) id += ALPHABET[random[i]!]
  return id
}

/** The smallest id of `kind` made at or after `ms`: a lower bound for "created since" scans. */
export const idFloor = (kind: IdKind, ms: number): string => `${IdPrefixes[kind]}_${timePart(ms)}${"0".repeat(RANDOM_CHARS)}`

/** Each kind as a sentence names it. */
const IdLabels: Record<IdKind, string> = {
  booking: "booking",
  client: "client",
  service: "service",
  staff: "staff member",
  availability: "availability rule",
  hold: "hold",
  event: "event",
  webhook: "webhook endpoint",
  delivery: "webhook delivery",
  key: "API key",
  payment: "payment",
  account: "account",
  oauthClient: "OAuth client",
  user: "user",
  grant: "OAuth grant",
  domain: "custom domain",
  calendar: "calendar",
  series: "booking series"
}

const article = (noun: string) => (/^[aeiouAEIO]/.test(noun) ? "an" : "a")

/** Characters after the prefix and its `_`: 10 of time, 16 random. */
const ID_BODY = "[0-9A-HJKMNP-TV-Z]{26}"
const ANY_ID = new RegExp(`^[a-z]{3}_${ID_BODY}$`)

/**
 * Whether `text` has the form of an id of some kind. One that has not names nothing: it is
 * not looked up (so a NUL or a 5,000-character path segment never reaches storage) and not
 * echoed (a path segment may hold anything, a pasted secret too).
 */
export const isWellFormedId = (text: string): boolean => ANY_ID.test(text)

/** "must be a service id: svc_ followed by 26 letters and digits, such as svc_01JQ4Z8X9V3K7M2N5P6R8T0W1Y". */
const idMessage = (kind: IdKind): string => {
  const prefix = `${IdPrefixes[kind]}_`
  const label = IdLabels[kind]
  return `must be ${article(label)} ${label} id: ${prefix} followed by 26 letters and digits, such as ${prefix}01JQ4Z8X9V3K7M2N5P6R8T0W1Y`
}

/** Schema of an id of one kind: its prefix and 26 base32 characters. */
export const Id = (kind: IdKind) =>
  Schema.String.pipe(
    Schema.pattern(new RegExp(`^${IdPrefixes[kind]}_${ID_BODY}$`), { message: () => idMessage(kind) }),
    Schema.annotations({ description: `${IdLabels[kind]} id (\`${IdPrefixes[kind]}_…\`)` })
  )
