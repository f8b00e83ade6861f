/**
 * Keeps a collective booking's or hold's occupancy of its further members in step with it
 * (see `MemberOccupancyCollection`): every write of a booking or hold that can span members
 * goes through `sync`, in the same transaction.
 */
import { Effect } from "effect"
import { ACTIVE_STATUSES, type Booking } from "../bookings/booking.js"
import type { Hold } from "../availability/hold.js"
import { type MemberOccupancy, MemberOccupancyCollection } from "../ports/collections.js"
import type { StorageService } from "../ports/storage.js"

export const makeMemberOccupancy = (storage: StorageService) => {
  const rows = storage.collection(MemberOccupancyCollection)

  const rowsFor = (source: Booking | Hold): Array<MemberOccupancy> => {
    const live = source.object === "hold" || ACTIVE_STATUSES.includes(source.status)
    if (!live) return []
    return source.staff_ids.filter((id) => id !== source.staff_id).map((staff_id) => ({
      id: `${source.id}.${staff_id}`,
      source_id: source.id,
      kind: source.object,
      staff_id,
      service_id: source.service_id,
      start: source.start,
      end: source.end,
      buffer_before_minutes: source.buffer_before_minutes,
      buffer_after_minutes: source.buffer_after_minutes,
      expires_at: source.object === "hold" ? source.expires_at : null
    }))
  }

  /** Rewrites the rows of `source` as it is now (none once it stops occupying time); `previous`: before this write. */
  const sync = (source: Booking | Hold, previous?: Booking | Hold) => {
    const wanted = rowsFor(source)
    // Single-member bookings and holds never had rows: nothing to read.
    if (wanted.length === 0 && source.staff_ids.length <= 1 && (previous?.staff_ids.length ?? 0) <= 1) return Effect.void
    return Effect.gen(function*() {
      const present = yield* rows.listIndexes({ where: [{ column: "source_id", op: "eq", value: source.id }], columns: [] })
      for (const row of present) yield* rows.remove(row.id)
      for (const row of wanted) yield* rows.insert(row)
    })
  }

  /** Removes the rows of a hold or booking that is gone (released, converted). */
  const release = (sourceId: string, memberCount: number) =>
    memberCount <= 1 ? Effect.void : Effect.gen(function*() {
      const present = yield* rows.listIndexes({ where: [{ column: "source_id", op: "eq", value: sourceId }], columns: [] })
      for (const row of present) yield* rows.remove(row.id)
    })

  return { sync, release } as const
}
