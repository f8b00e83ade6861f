/**
 * The rules of occupied time that the slot sweep (slots.ts), the check of one start
 * (checks.ts) and the stored index columns (src/ports/collections.ts) share, stated once:
 * - a booking or hold occupies its own time widened by its service's buffers;
 * - it keeps another booking out when their occupied ranges overlap, except, when
 *   `capacity > 1`, a booking of the same service at the same start, which takes a seat;
 * - the notice rules bound the starts by `now`.
 */
import { toMillis } from "../domain/common.js"
import type { Interval, Occupancy, SlotPolicy } from "./types.js"

const MINUTE = 60_000

/** Where the range occupied by time starting at `start` begins: `bufferBefore` (ms) earlier. */
export const occupiedFrom = (start: number, bufferBefore: number): number => start - bufferBefore

/** Where the range occupied by time ending at `end` ends: `bufferAfter` (ms) later. */
export const occupiedUntil = (end: number, bufferAfter: number): number => end + bufferAfter

/** The range a booking at `start` occupies: its own time widened by the service's buffers. */
export const occupiedRange = (policy: SlotPolicy, start: number): Interval => ({
  start: occupiedFrom(start, policy.buffer_before),
  end: occupiedUntil(start + policy.duration, policy.buffer_after)
})

/** What a stored booking, hold or member row keeps of its time and its service's buffers. */
export interface Buffered {
  readonly start: string
  readonly end: string
  readonly buffer_before_minutes: number
  readonly buffer_after_minutes: number
}

/** The `occupied_start` index column of a stored booking, hold or member row. */
export const storedOccupiedStart = (doc: Buffered): number => occupiedFrom(toMillis(doc.start), doc.buffer_before_minutes * MINUTE)

/** The `occupied_end` index column of a stored booking, hold or member row. */
export const storedOccupiedEnd = (doc: Buffered): number => occupiedUntil(toMillis(doc.end), doc.buffer_after_minutes * MINUTE)

/** Whether an occupancy's occupied range overlaps `[occStart, occEnd)`. */
const overlapsOccupied = (o: Occupancy, occStart: number, occEnd: number): boolean => o.occupied_start < occEnd && occStart < o.occupied_end

/** A booking of the same service at the same start takes a seat rather than conflicting. */
const isSeat = (policy: SlotPolicy, o: Occupancy, start: number): boolean =>
  policy.capacity > 1 && o.service_id === policy.service_id && o.start === start

/** Whether `o` keeps a booking at `start` (occupying `[occStart, occEnd)`) from being made. */
export const conflicts = (policy: SlotPolicy, o: Occupancy, start: number, occStart: number, occEnd: number): boolean =>
  overlapsOccupied(o, occStart, occEnd) && !isSeat(policy, o, start)

/** Seats taken per start by occupancies of the policy's service (only when capacity > 1). */
export const seatsByStart = (policy: SlotPolicy, occupancy: ReadonlyArray<Occupancy>): Map<number, number> | undefined => {
  if (policy.capacity <= 1) return undefined
  const seats = new Map<number, number>()
  for (const o of occupancy) {
    if (o.service_id === policy.service_id) seats.set(o.start, (seats.get(o.start) ?? 0) + 1)
  }
  return seats
}

/** The first and last start the notice rules allow at `now`. */
export const noticeBounds = (policy: SlotPolicy, now: number): { readonly earliest: number; readonly latest: number } => ({
  earliest: now + policy.min_notice,
  latest: now + policy.max_advance
})

export const byOccupiedStart = (a: Occupancy, b: Occupancy) => a.occupied_start - b.occupied_start
