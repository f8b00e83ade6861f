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
  calendar: "cal"
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
  return `${IdPrefixes[kind]}_${timePart(now)}${random.map((d) => ALPHABET[d]).join("")}`
}

/** The smallest id of `kind` made at or after `ms`: a lower bound for "created since" scans. */
export const idFloor = (kind: IdKind, ms: number): string => `${IdPrefixes[kind]}_${timePart(ms)}${"0".repeat(RANDOM_CHARS)}`

/** Schema of an id of one kind: its prefix and 26 base32 characters. */
export const Id = (kind: IdKind) =>
  Schema.String.pipe(
    Schema.pattern(new RegExp(`^${IdPrefixes[kind]}_[0-9A-HJKMNP-TV-Z]{26}$`), {
      message: () => `must be a ${IdPrefixes[kind]}_ id`
    }),
    Schema.annotations({ description: `${kind} id (\`${IdPrefixes[kind]}_…\`)` })
  )
