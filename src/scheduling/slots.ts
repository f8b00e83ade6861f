/**
 * Slots (docs/api.md §3 "Slots"): every bookable start of some schedules in a range, by the
 * rules of occupancy.ts (overlap, seats, notice), swept in one pass per schedule. The check
 * of one start with its reasons, and the alternatives of a refused one, are in checks.ts.
 */
import { formatInstant } from "../domain/common.js"
import type { Slot } from "../domain/slot.js"
import { byOccupiedStart, conflicts, noticeBounds, occupiedRange, seatsByStart } from "./occupancy.js"
import type { Interval, Occupancy, SlotCandidate, SlotPolicy, StaffSchedule } from "./types.js"
import { prepareRules, windowsOf } from "./windows.js"

/**
 * Occupancy in order of `occupied_start`. Integer keys are packed with their index into one
 * float (`(key − min) · n + i`, exact below 2^53) and sorted natively, about twice as fast
 * as a comparator sort for 100 bookings; anything else falls back to the comparator.
 */
const sortedOccupancy = (occupancy: ReadonlyArray<Occupancy>): ReadonlyArray<Occupancy> => {
  const n = occupancy.length
  let sorted = true
  let min = Number.POSITIVE_INFINITY
  let max = Number.NEGATIVE_INFINITY
  let integers = true
  for (let i = 0; i < n; i++) {
    const key = occupancy[i]!.occupied_start
    if (i > 0 && key < occupancy[i - 1]!.occupied_start) sorted = false
    if (key < min) min = key
    if (key > max) max = key
    if (!Number.isInteger(key)) integers = false
  }
  if (sorted) return occupancy
  if (!integers || (max - min + 1) * n >= Number.MAX_SAFE_INTEGER) return [...occupancy].sort(byOccupiedStart)
  const packed = new Float64Array(n)
  for (let i = 0; i < n; i++) packed[i] = (occupancy[i]!.occupied_start - min) * n + i
  packed.sort()
  const out = new Array<Occupancy>(n)
  for (let i = 0; i < n; i++) out[i] = occupancy[packed[i]! % n]!
  return out
}

const stepOf = (policy: SlotPolicy): number => (policy.interval > 0 ? policy.interval : policy.duration)

/** The grid the slots step along: a window's start plus whole steps; its first start at or after `t`. */
const gridStartFrom = (windowStart: number, t: number, step: number): number =>
  t <= windowStart ? windowStart : windowStart + Math.ceil((t - windowStart) / step) * step

/**
 * Where `start` lies against the grid of `schedule`'s windows (`gridStartFrom`): `"on"` it,
 * `"outside"` every window (the checks say why), or off it, with the grid starts around it
 * that fit the window.
 */
export const gridPlace = (policy: SlotPolicy, schedule: StaffSchedule, start: number): "on" | "outside" | ReadonlyArray<number> => {
  const step = stepOf(policy)
  for (const w of windowsOf(prepareRules(schedule.rules, schedule.busy), { start, end: start + 1 })) {
    if (start < w.start || start >= w.end) continue
    const after = gridStartFrom(w.start, start, step)
    if (after === start) return "on"
    return [after - step, after].filter((s) => s >= w.start && s + policy.duration <= w.end)
  }
  return "outside"
}

/** One schedule's bookable starts, in order, and the seats left at each when seats vary. */
interface Run {
  readonly staff_id: string
  readonly starts: Array<number>
  /** Only when capacity > 1; otherwise every start has `capacity` seats. */
  readonly remaining: Array<number> | undefined
}

/** The bookable starts of one schedule. */
const runOf = (policy: SlotPolicy, schedule: StaffSchedule, range: Interval, now: number): Run => {
  const { duration, capacity } = policy
  const run: Run = { staff_id: schedule.staff_id, starts: [], remaining: capacity > 1 ? [] : undefined }
  const step = stepOf(policy)
  const notice = noticeBounds(policy, now)
  const earliest = Math.max(range.start, notice.earliest)
  const latest = notice.latest
  const windows = windowsOf(prepareRules(schedule.rules, schedule.busy), range)
  if (windows.length === 0) return run
  const occ = sortedOccupancy(schedule.occupancy)
  const seats = seatsByStart(policy, occ)
  // Sweep: candidates only move forward in time, so occupancies enter `active` once (in
  // order of occupied_start) and leave it once their occupied range is behind.
  const active: Array<Occupancy> = []
  let next = 0
  for (const w of windows) {
    let s = gridStartFrom(w.start, earliest, step)
    for (; s + duration <= w.end && s < range.end && s <= latest; s += step) {
      const { start: occStart, end: occEnd } = occupiedRange(policy, s)
      while (next < occ.length && occ[next]!.occupied_start < occEnd) active.push(occ[next++]!)
      let conflict = false
      let kept = 0
      for (let i = 0; i < active.length; i++) {
        const o = active[i]!
        if (o.occupied_end <= occStart) continue // behind every later candidate too
        active[kept++] = o
        if (!conflict && conflicts(policy, o, s, occStart, occEnd)) conflict = true
      }
      if (kept < active.length) active.length = kept // a runtime call: only when something left
      if (conflict) continue
      if (run.remaining !== undefined) {
        const taken = seats?.get(s) ?? 0
        if (taken >= capacity) continue
        run.remaining.push(capacity - taken)
      }
      run.starts.push(s)
    }
  }
  return run
}

/** Makes what a bookable start is returned as. */
export type SlotMaker<T> = (start: number, end: number, staff_id: string, remaining: number) => T

const candidate: SlotMaker<SlotCandidate> = (start, end, staff_id, remaining) => ({ start, end, staff_id, remaining })

/**
 * Makes the public `Slot`s of one list. Many staff share the same starts, so each instant's
 * text is made once per list and shared: a month for fifty people is ~18,000 slots but ~400
 * texts. Slots come in start order, so the last start and end made usually match the next.
 */
export const makeSlotFormatter = (): SlotMaker<Slot> => {
  const texts = new Map<number, string>()
  const text = (ms: number) => {
    let found = texts.get(ms)
    if (found === undefined) texts.set(ms, found = formatInstant(ms))
    return found
  }
  let lastStart = Number.NaN
  let startText = ""
  let lastEnd = Number.NaN
  let endText = ""
  // One `[staff_id]` per member, shared by their slots.
  const alone = new Map<string, ReadonlyArray<string>>()
  return (start, end, staff_id, remaining) => {
    if (start !== lastStart) startText = text(lastStart = start)
    if (end !== lastEnd) endText = text(lastEnd = end)
    let staff_ids = alone.get(staff_id)
    if (staff_ids === undefined) alone.set(staff_id, staff_ids = [staff_id])
    return { start: startText, end: endText, staff_id, staff_ids, remaining }
  }
}

interface ComputeInput {
  readonly policy: SlotPolicy
  readonly schedules: ReadonlyArray<StaffSchedule>
  readonly range: Interval
  readonly now: number
}

/**
 * Every bookable start of the schedules in `range`, in start order; equal starts keep the
 * order of `schedules`. Each is made by `make` (a `SlotCandidate` by default), once: the
 * runs hold bare numbers until then, so a month for fifty people makes 18,000 objects, not
 * three times as many.
 */
export function computeSlots(input: ComputeInput): Array<SlotCandidate>
export function computeSlots<T>(input: ComputeInput, make: SlotMaker<T>): Array<T>
export function computeSlots<T>(input: ComputeInput, make?: SlotMaker<T>): Array<T | SlotCandidate> {
  const { policy, schedules, range, now } = input
  if (!(policy.duration > 0) || !(stepOf(policy) > 0) || range.end <= range.start) return []
  const runs: Array<Run> = []
  for (const schedule of schedules) {
    const run = runOf(policy, schedule, range, now)
    if (run.starts.length > 0) runs.push(run)
  }
  return mergeRuns<T | SlotCandidate>(runs, policy, make ?? candidate)
}

/**
 * The runs' starts as one list in start order, ties in run order, made into slots only
 * then, once each. A bottom-up merge sort whose first segments are the (sorted) runs:
 * neighbouring segments merge pairwise between two buffers until one is left, n·log k for
 * n starts of k runs, with each start carrying the index of its run.
 */
const mergeRuns = <T>(runs: ReadonlyArray<Run>, policy: SlotPolicy, make: SlotMaker<T>): Array<T> => {
  let n = 0
  for (const run of runs) n += run.starts.length
  let starts = new Float64Array(n)
  let owners = new Int32Array(n)
  let bounds = [0]
  for (let r = 0; r < runs.length; r++) {
    const at = bounds[r]!
    starts.set(runs[r]!.starts, at)
    owners.fill(r, at, at + runs[r]!.starts.length)
    bounds.push(at + runs[r]!.starts.length)
  }
  let nextStarts = new Float64Array(n)
  let nextOwners = new Int32Array(n)
  while (bounds.length > 2) {
    const merged = [0]
    for (let b = 0; b + 1 < bounds.length; b += 2) {
      // Segment [lo, mid) merges with [mid, hi); a lone last segment is copied. On equal
      // starts the left segment's come first, which keeps the order of the runs.
      const lo = bounds[b]!
      const mid = bounds[b + 1]!
      const hi = bounds[b + 2] ?? mid
      let i = lo
      let j = mid
      for (let k = lo; k < hi; k++) {
        const left = i < mid && (j >= hi || starts[i]! <= starts[j]!)
        const from = left ? i++ : j++
        nextStarts[k] = starts[from]!
        nextOwners[k] = owners[from]!
      }
      merged.push(hi)
    }
    const [doneStarts, doneOwners] = [nextStarts, nextOwners]
    nextStarts = starts
    nextOwners = owners
    starts = doneStarts
    owners = doneOwners
    bounds = merged
  }
  const { duration, capacity } = policy
  const seen = new Int32Array(runs.length)
  const out = new Array<T>(n)
  for (let i = 0; i < n; i++) {
    const run = runs[owners[i]!]!
    const start = starts[i]!
    const nth = seen[owners[i]!]!++
    out[i] = make(start, start + duration, run.staff_id, run.remaining === undefined ? capacity : run.remaining[nth]!)
  }
  return out
}
