/**
 * A visitor: whoever calls through a publishable key. The key is public by design (anyone can
 * copy it from a web page), so visitors are told apart by client address, which the edge
 * passes in. Visitors see the public views of services and staff, are rate-limited per
 * address, hold only a few short holds, book a limited number of appointments a day, only as
 * new clients, and are told nothing of other bookings.
 */
import { Effect } from "effect"
import { OutsideAvailability, RateLimited, SeriesUnavailable, SlotUnavailable } from "./errors.js"
import type { Reason } from "./slot.js"

export interface Visitor {
  /** The publishable key's id. */
  readonly key_id: string
  /** The client address the request came from, as `visitorAddress` counts it. */
  readonly address: string
}

/** A visitor's two limits on what it takes: one per client address, one for the key's visitors together. */
export interface VisitorLimits {
  readonly perAddress: number
  readonly perKey: number
}

/**
 * Which limit `visitor` would pass by taking `adding` more, given what its key's visitors
 * already have (one entry per item: the client address it was taken from), or `undefined`
 * when neither: the address's own first, so a visitor over its share is told about its own
 * doing, whatever anyone else does.
 */
export const passedVisitorLimit = (
  visitor: Visitor,
  taken: ReadonlyArray<unknown>,
  adding: number,
  limits: VisitorLimits
): "address" | "key" | undefined => {
  let own = 0
  for (const address of taken) if (address === visitor.address) own++
  if (own + adding > limits.perAddress) return "address"
  if (taken.length + adding > limits.perKey) return "key"
  return undefined
}

/**
 * Appointments (a series' occurrences each) a client address may book through a publishable
 * key per UTC day: a weekly series for a year (a series has at most 52) and a few single
 * visits besides, far more than one person books in a day.
 */
export const VISITOR_OCCURRENCES_PER_ADDRESS_PER_DAY = 60
/**
 * Appointments a publishable key's visitors may book together per UTC day, whatever their
 * addresses: well above what one booking page takes in a day, and a bound on what a copied
 * key can fill with many addresses. Bookings made with a secret key are not counted.
 */
export const VISITOR_OCCURRENCES_PER_KEY_PER_DAY = 1000
export const VISITOR_BOOKING_LIMITS: VisitorLimits = {
  perAddress: VISITOR_OCCURRENCES_PER_ADDRESS_PER_DAY,
  perKey: VISITOR_OCCURRENCES_PER_KEY_PER_DAY
}

const DAY = 86_400_000

/** One appointment a visitor booked, kept to count its day's bookings (its id is the booking's). */
export interface VisitorBooking {
  readonly id: string
  readonly key_id: string
  readonly address: string
  readonly booked_at: string
}

/** The UTC day `now` falls in, as the instant it began: the visitor booking limits count per such day. */
export const visitorDayStart = (now: number): number => Math.floor(now / DAY) * DAY

/**
 * The `rate_limited` refusal of a visitor's booking of `adding` occurrences, given the client
 * addresses of what its key's visitors booked today (`visitorDayStart`), or `undefined`.
 */
export const visitorBookingRefusal = (
  visitor: Visitor,
  bookedToday: ReadonlyArray<unknown>,
  adding: number,
  now: number
): RateLimited | undefined => {
  const passed = passedVisitorLimit(visitor, bookedToday, adding, VISITOR_BOOKING_LIMITS)
  if (passed === undefined) return undefined
  const retry = Math.max(1, Math.ceil((visitorDayStart(now) + DAY - now) / 1000))
  const frees = `the count starts again at 00:00 UTC, in ${Math.ceil(retry / 60)} min`
  const asked = adding === 1 ? "this appointment" : `these ${adding} appointments`
  return new RateLimited({
    detail: passed === "address"
      ? `a client address books at most ${VISITOR_OCCURRENCES_PER_ADDRESS_PER_DAY} appointments (each occurrence of a series counts) ` +
        `a day with a publishable key, and ${asked} would pass it; ${frees}`
      : `this publishable key's visitors book at most ${VISITOR_OCCURRENCES_PER_KEY_PER_DAY} appointments a day together, ` +
        `and ${asked} would pass it; ${frees}`,
    retry_after_seconds: retry
  })
}

/**
 * What a visitor or a manage link's holder is told about a time it cannot have: that it is
 * taken, never by what (another booking's or hold's id, or its times). Other reasons (hours,
 * notice, seats) are about the time asked for and stay as they are.
 */
const OTHERS: Partial<Record<Reason["code"], string>> = {
  booking_overlap: "This time is already booked.",
  buffer_overlap: "This time is too close to another booking.",
  held: "This time is held for someone else."
}
const anonymousReason = (reason: Reason): Reason => {
  const said = OTHERS[reason.code]
  if (said === undefined) return reason
  const { booking_id: _b, hold_id: _h, ...rest } = reason
  return { ...rest, detail: said }
}
const anonymousReasons = (reasons: ReadonlyArray<Reason>) => reasons.map(anonymousReason)
const joined = (reasons: ReadonlyArray<Reason>) => [...new Set(reasons.map((r) => r.detail))].join(" ")

/** `error` as a visitor or a link holder may see it: refusals of a time name no other booking or hold. */
export const withoutOthers = <E>(error: E): E => {
  if (error instanceof SlotUnavailable || error instanceof OutsideAvailability) {
    const reasons = anonymousReasons(error.reasons)
    const fields = { detail: joined(reasons), reasons, alternatives: error.alternatives }
    return (error instanceof SlotUnavailable ? new SlotUnavailable(fields) : new OutsideAvailability(fields)) as E
  }
  if (error instanceof SeriesUnavailable) {
    const occurrences = error.occurrences.map((o) => ({ start: o.start, reasons: anonymousReasons(o.reasons) }))
    const first = occurrences[0]
    // The detail's own words around its first occurrence's reasons: "n of m … (first: …); nothing was booked".
    const { detail: said } = error
    const detail = first === undefined
      ? said
      : `${said.slice(0, said.indexOf("(first: "))}(first: ${first.start}: ${joined(first.reasons)})${
        said.slice(said.lastIndexOf(")") + 1)
      }`
    return new SeriesUnavailable({ detail, occurrences }) as E
  }
  return error
}

/** `effect` with its refusals as a visitor or link holder may see them (`withoutOthers`). */
export const hidingOthers = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> => Effect.mapError(effect, withoutOthers)

/**
 * What a visitor's `Idempotency-Key` is kept under: apart from the keys of the account's own
 * integrations (a visitor must neither replay nor claim those), shared by the publishable
 * key's visitors so that a retry from a changed address still replays.
 */
export const visitorIdempotencyKey = (visitor: Visitor, key: string): string => `visitor ${visitor.key_id} ${key}`

const IPV4 = /^\d{1,3}(\.\d{1,3}){3}$/
const GROUP = /^[0-9a-f]{1,4}$/i

/**
 * The address a visitor is counted by: an IPv4 address as it is (an IPv4-mapped IPv6 one
 * too), an IPv6 address by its /64 network, since one subscriber usually gets a whole /64 and
 * can move through it at will. Anything else is taken as it is.
 */
export const visitorAddress = (address: string): string => {
  const mapped = /^::ffff:(.+)$/i.exec(address)?.[1]
  if (mapped !== undefined && IPV4.test(mapped)) return mapped
  if (!address.includes(":")) return address
  const halves = address.replace(/%.*$/, "").split("::")
  if (halves.length > 2) return address
  const split = (half: string | undefined) =>
    half === undefined || half === "" ? [] : half.split(":").flatMap((part) => (IPV4.test(part) ? ["0", "0"] : [part]))
  const head = split(halves[0])
  const tail = split(halves[1])
  const missing = 8 - head.length - tail.length
  if ((halves.length === 1 ? missing !== 0 : missing < 1) || ![...head, ...tail].every((group) => GROUP.test(group))) return address
  const groups = [...head, ...Array<string>(missing).fill("0"), ...tail]
  return `${groups.slice(0, 4).map((group) => parseInt(group, 16).toString(16)).join(":")}::/64`
}
