/**
 * The writer slot each SQLite file has, shared by every storage opened on it in this process:
 * its lock, and the groups of writes that share one COMMIT.
 */
import * as path from "node:path"
import type { Effect } from "effect"
import type { StorageFailure } from "../../src/domain/errors.js"
import { type Lock, makeLock } from "./lock.js"
import type { Connection } from "./query.js"

/** A write done in a group, waiting for the group's COMMIT. */
export interface Member {
  settled: boolean
  /** Why the group did not commit, once settled. */
  failure: StorageFailure | undefined
  resume: ((outcome: Effect.Effect<void, StorageFailure>) => void) | undefined
}

/** The SQLite transaction open on the writer, shared by the writes that ran in it. */
export interface Group {
  readonly members: Array<Member>
  /** How many of its members wrote (the others were undone to their savepoints). */
  writes: number
  /** Its COMMIT is set for the end of this turn of the event loop. */
  commitDue: boolean
}

/** Writes that end while a group is open join it, up to this many; the last one commits. */
export const GROUP_LIMIT = 64

/**
 * The writer lock of a database file, shared by every storage of that file in this process
 * (a server and a mounted handler on one file): a write of one waits for the other's in
 * turn instead of blocking the event loop in `busy_timeout` while the other holds the file's
 * write lock (an open group, or a write awaiting something). A private database has its own.
 */
interface WriterSlot {
  readonly lock: Lock
  /** Each storage's group ending, to end the others' before a BEGIN (holding the lock). */
  readonly endGroups: Set<() => void>
  /** Groups whose COMMIT fell due while a write held the lock: ended before it is released. */
  readonly due: Set<() => void>
  storages: number
}

const writerSlots = new Map<string, WriterSlot>()

const makeSlot = (): WriterSlot => ({ lock: makeLock(), endGroups: new Set(), due: new Set(), storages: 0 })

/** The slot of `writer`'s file, shared in this process; a private slot for a database in memory. */
export const slotOf = (writer: Connection): { readonly slot: WriterSlot; readonly leave: () => void } => {
  if (writer.memory || writer.name === "") return { slot: makeSlot(), leave: () => {} }
  const file = writer.name.startsWith("file:") ? writer.name : path.resolve(writer.name)
  const slot = writerSlots.get(file) ?? makeSlot()
  writerSlots.set(file, slot)
  slot.storages++
  return {
    slot,
    leave: () => {
      if (--slot.storages === 0) writerSlots.delete(file)
    }
  }
}
