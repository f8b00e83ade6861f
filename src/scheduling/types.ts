/**
 * The inputs of the pure scheduling functions. Everything is epoch milliseconds; the
 * use cases translate resources into these shapes, so the algorithms stay free of storage
 * and of text parsing on their hot paths.
 */
import type { AvailabilityRule } from "../availability/rule.js"

/** Half-open interval `[start, end)` in epoch milliseconds. */
export interface Interval {
  readonly start: number
  readonly end: number
}

/** Something that occupies a staff member: a pending/confirmed booking or an active hold. */
export interface Occupancy {
  readonly kind: "booking" | "hold"
  readonly id: string
  readonly service_id: string
  readonly start: number
  readonly end: number
  /** `start − buffer_before` of the occupying booking's service. */
  readonly occupied_start: number
  /** `end + buffer_after` of the occupying booking's service. */
  readonly occupied_end: number
}

/** What a service asks of a slot, in milliseconds. */
export interface SlotPolicy {
  readonly service_id: string
  readonly duration: number
  readonly buffer_before: number
  readonly buffer_after: number
  readonly interval: number
  readonly capacity: number
  readonly min_notice: number
  readonly max_advance: number
}

/** Busy time from one of the staff member's external calendars: it blocks like time off. */
export interface BusyInterval extends Interval {
  readonly calendar_id: string
}

/** One staff member's rules and commitments. */
export interface StaffSchedule {
  readonly staff_id: string
  readonly rules: ReadonlyArray<AvailabilityRule>
  /** Busy ranges of the staff member's external calendars, any order; none when absent. */
  readonly busy?: ReadonlyArray<BusyInterval>
  /** Any order. */
  readonly occupancy: ReadonlyArray<Occupancy>
}

/** A bookable start, before it is formatted as the public `Slot`. */
export interface SlotCandidate {
  readonly start: number
  readonly end: number
  readonly staff_id: string
  readonly remaining: number
}
