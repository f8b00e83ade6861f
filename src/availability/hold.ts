import { Schema } from "effect"
import { Instant, Metadata, ObjectType, optional, Timestamps } from "../domain/common.js"
import { StaffAssignmentFields } from "../domain/assignment.js"
import { HoldLimitReached } from "../domain/errors.js"
import { HOLD_DEFAULT_TTL_SECONDS, HOLD_MAX_TTL_SECONDS, VISITOR_HOLD_MAX_TTL_SECONDS } from "../domain/holdLifetime.js"
import { Id } from "../domain/ids.js"
import { passedVisitorLimit, type Visitor } from "../domain/visitor.js"

export { HOLD_DEFAULT_TTL_SECONDS, HOLD_MAX_TTL_SECONDS, VISITOR_HOLD_MAX_TTL_SECONDS } from "../domain/holdLifetime.js"
/** Active visitor holds per client address and key: the time picked and one picked after it. */
export const VISITOR_HOLDS_PER_ADDRESS = 2
/**
 * Active visitor holds per key, whoever asks, at the least: far more visitors than a small
 * booking page has mid-booking at once. Where the service asked for has more open, the key
 * may hold a share of it (`visitorHoldsPerKey`), so that a handful of addresses cannot take
 * every hold of a busy page.
 */
export const VISITOR_HOLDS_PER_KEY = 20
/** The days ahead, from now, whose open starts of the service set how many holds a key may have. */
export const VISITOR_HOLD_WINDOW_DAYS = 7
/** The share of those starts (open ones and the key's held ones) a key's visitors may hold at once. */
export const VISITOR_HOLD_SHARE = 0.5

/** How many holds a key's visitors may have at once, when the service held has `bookable` starts in the window. */
export const visitorHoldsPerKey = (bookable: number): number => Math.max(VISITOR_HOLDS_PER_KEY, Math.floor(bookable * VISITOR_HOLD_SHARE))

/** How a hold is stored: a visitor hold also records its visitor, to count their holds. */
export type StoredHold = Hold & { readonly visitor?: Visitor | undefined }

/** The hold as callers see it: never who held it. */
export const holdView = (stored: StoredHold): Hold => {
  if (stored.visitor === undefined) return stored
  const { visitor: _, ...hold } = stored
  return hold
}

/**
 * The `hold_limit_reached` refusal of another hold for `visitor`, given the client addresses
 * of its key's active holds and how many the key may have (`visitorHoldsPerKey`), or
 * `undefined` when it may hold. The key's refusal says nothing of the other visitors' holds.
 */
export const visitorHoldRefusal = (
  visitor: Visitor,
  activeAddresses: ReadonlyArray<unknown>,
  perKey: number
): HoldLimitReached | undefined => {
  switch (passedVisitorLimit(visitor, activeAddresses, 1, { perAddress: VISITOR_HOLDS_PER_ADDRESS, perKey })) {
    case "address":
      return new HoldLimitReached({
        detail:
          `this client address already holds ${VISITOR_HOLDS_PER_ADDRESS} slots with this key, its most at once; release one, book, or wait for one to expire`
      })
    case "key":
      return new HoldLimitReached({
        detail: "no more slots can be held with this publishable key just now; book the time without a hold, or try again in a few minutes"
      })
    default:
      return undefined
  }
}

/** A slot reserved for a short time while a client enters details (docs/api.md §3 Holds). */
export const Hold = Schema.Struct({
  id: Id("hold"),
  object: ObjectType("hold"),
  service_id: Id("service").annotations({ description: "the service of the held slot" }),
  staff_id: Id("staff").annotations({ description: "the staff member of the held slot (collective: the first of `staff_ids`)" }),
  ...StaffAssignmentFields,
  start: Instant.annotations({ description: "the held start" }),
  end: Instant.annotations({ description: "the held end: start plus the service's duration" }),
  expires_at: Instant.annotations({ description: "when the slot is free again unless booked with this hold" }),
  buffer_before_minutes: Schema.Int.annotations({ description: "the service's buffer when held" }),
  buffer_after_minutes: Schema.Int.annotations({ description: "the service's buffer when held" }),
  metadata: Metadata,
  ...Timestamps
}).annotations({ identifier: "Hold" })
export type Hold = typeof Hold.Type

export const HoldCreate = Schema.Struct({
  service_id: Id("service").annotations({ description: "the service to hold a slot of" }),
  staff_id: optional(
    Id("staff").annotations({
      description: "the staff member to hold; omit on a round-robin service to have one picked now, on a collective " +
        "service to hold every member, or else to hold the first free member"
    })
  ),
  start: Instant.annotations({ description: "a bookable start" }),
  ttl_seconds: optional(
    Schema.Int.pipe(Schema.between(1, HOLD_MAX_TTL_SECONDS, {
      message: () => `must be a whole number of seconds from 1 to ${HOLD_MAX_TTL_SECONDS}`
    })).annotations({
      description: `how long to hold, 1 to ${HOLD_MAX_TTL_SECONDS} seconds (default ${HOLD_DEFAULT_TTL_SECONDS}); ` +
        `with a publishable key at most ${VISITOR_HOLD_MAX_TTL_SECONDS} (longer asks are shortened, \`expires_at\` says when)`
    })
  ),
  metadata: optional(Metadata)
}).annotations({ identifier: "HoldCreate" })
export type HoldCreate = typeof HoldCreate.Type
