/**
 * Group commit on the SQLite writer (adapters/sqlite/transactions.ts): writes that end while
 * another write's transaction is still uncommitted share its COMMIT, each behind a savepoint.
 * What must hold: every write is durable before its caller hears of it, one write's failure
 * undoes only its own changes, a failed COMMIT fails every write of the group, the reader
 * never sees a write before its COMMIT, and a lone connection commits each write on its own.
 */
import { describe, expect, it } from "@effect/vitest"
import Database from "better-sqlite3"
import { Deferred, Effect, Exit, Fiber } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { statementCache } from "../../adapters/sqlite/query.js"
import { makeTransactions } from "../../adapters/sqlite/transactions.js"
import type { StorageFailure } from "../../src/domain/errors.js"

/** A storage's transactions on `filename`, with a writer and (unless told) a reader, as the layer opens them. */
const storageOn = (filename: string, options: { readonly reader: boolean }) => {
  // A long busy_timeout: a BEGIN that waited on this process's own open group would hang.
  const writer = new Database(filename, { timeout: 60_000 })
  writer.pragma("journal_mode = WAL")
  writer.pragma("foreign_keys = ON")
  const reader = new Database(filename, { readonly: true })
  const commits: Array<number> = []
  const tx = makeTransactions({ writer, writerStatement: statementCache(writer), onCommit: (writes) => commits.push(writes) })
  if (options.reader) tx.useReader(statementCache(reader))
  const insert = (id: string, parent: string | null = null) =>
    tx.acrossTenants((statements) => {
      statements("INSERT INTO rows (id, parent) VALUES (?, ?)", false).run(id, parent)
    })
  const committed = () => (reader.prepare("SELECT id FROM rows ORDER BY id").all() as Array<{ id: string }>).map((row) => row.id)
  const close = () => {
    tx.close()
    reader.close()
    writer.close()
  }
  return { tx, writer, insert, committed, commits, close }
}

/** A new file with the test's tables and one storage on it; `commits` lists each COMMIT's writes. */
const openFile = (options: { readonly reader: boolean }) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "slotwise-group-"))
  const filename = path.join(dir, "group.db")
  const setup = new Database(filename)
  setup.pragma("journal_mode = WAL")
  setup.exec(`CREATE TABLE parents (id TEXT PRIMARY KEY);
    CREATE TABLE rows (id TEXT PRIMARY KEY, parent TEXT REFERENCES parents (id) DEFERRABLE INITIALLY DEFERRED)`)
  setup.close()
  const storage = storageOn(filename, options)
  const others: Array<{ close: () => void }> = []
  return {
    ...storage,
    /** Another storage of the same file in this process (a mounted handler beside a server). */
    another: () => {
      const other = storageOn(filename, { reader: true })
      others.push(other)
      return other
    },
    close: () => {
      others.forEach((other) => other.close())
      storage.close()
      fs.rmSync(dir, { recursive: true, force: true })
    }
  }
}

/**
 * Forks a write of `id` and waits until its effect has ended: it then waits for its group's
 * COMMIT, due at the end of this turn of the event loop.
 */
const writtenAwaitingCommit = (file: ReturnType<typeof openFile>, id: string) =>
  Effect.gen(function*() {
    const written = yield* Deferred.make<void>()
    const fiber = yield* Effect.fork(file.tx.transaction(Effect.zipRight(file.insert(id), Deferred.succeed(written, undefined))))
    yield* Deferred.await(written)
    return fiber
  })

/** Each write in a transaction of its own, all started together; how each ended. */
const together = <E>(file: ReturnType<typeof openFile>, writes: ReadonlyArray<Effect.Effect<void, E>>) =>
  Effect.forEach(writes, (write) => Effect.exit(file.tx.transaction(write)), { concurrency: "unbounded" })

describe("sqlite group commit", () => {
  it.live("concurrent writes share COMMITs, and each is committed before its caller hears of it", () =>
    Effect.gen(function*() {
      const file = openFile({ reader: true })
      const ids = Array.from({ length: 20 }, (_, i) => `r${String(i).padStart(2, "0")}`)
      // Each caller checks, as soon as it is answered, that the reader sees its row.
      const seenAtAnswer = yield* Effect.forEach(
        ids,
        (id) => Effect.map(file.tx.transaction(file.insert(id)), () => file.committed().includes(id)),
        { concurrency: "unbounded" }
      )
      expect(seenAtAnswer).toEqual(ids.map(() => true))
      expect(file.committed()).toEqual(ids)
      expect(file.commits.reduce((sum, writes) => sum + writes, 0)).toBe(20)
      // Twenty writes started together end in the same turns: far fewer COMMITs than writes.
      expect(file.commits.length).toBeLessThan(20)
      expect(file.writer.inTransaction).toBe(false)
      file.close()
    }))

  it.live("a write joining a group sees the group's writes; the reader sees none before the COMMIT", () =>
    Effect.gen(function*() {
      const file = openFile({ reader: true })
      const first = yield* writtenAwaitingCommit(file, "a")
      const views = yield* file.tx.transaction(Effect.zipRight(
        file.insert("b"),
        file.tx.acrossTenants((statements) => ({
          inGroup: (statements("SELECT id FROM rows ORDER BY id", false).all() as Array<{ id: string }>).map((row) => row.id),
          reader: file.committed()
        }))
      ))
      expect(views).toEqual({ inGroup: ["a", "b"], reader: [] })
      yield* Fiber.join(first)
      expect(file.committed()).toEqual(["a", "b"])
      expect(file.commits).toEqual([2])
      file.close()
    }))

  it.live("a failed write undoes only its own changes; the others of its group commit", () =>
    Effect.gen(function*() {
      const file = openFile({ reader: true })
      const exits = yield* together(file, [
        file.insert("a"),
        Effect.zipRight(file.insert("b"), Effect.fail("refused" as const)),
        file.insert("c")
      ])
      expect(exits).toEqual([Exit.void, Exit.fail("refused"), Exit.void])
      expect(file.committed()).toEqual(["a", "c"])
      // One group: the refused write was undone to its savepoint, inside the others' transaction.
      expect(file.commits).toEqual([2])
      file.close()
    }))

  it.live("a COMMIT that fails fails every write of its group, refusals included, and keeps none", () =>
    Effect.gen(function*() {
      const file = openFile({ reader: true })
      // A deferred foreign key is checked at COMMIT only: the orphan makes the group's COMMIT fail.
      const exits = yield* together(file, [
        file.insert("a"),
        file.insert("orphan", "nobody"),
        Effect.zipRight(file.insert("c"), Effect.fail("refused" as const))
      ])
      for (const exit of exits) {
        expect(Exit.isFailure(exit)).toBe(true)
        const failure = Exit.isFailure(exit) ? Exit.causeOption(exit) : undefined
        expect(JSON.stringify(failure)).toContain("commit: FOREIGN KEY constraint failed")
      }
      expect(file.committed()).toEqual([])
      expect(file.commits).toEqual([])
      expect(file.writer.inTransaction).toBe(false)
      // The writer is usable at once afterwards.
      yield* file.tx.transaction(file.insert("d"))
      expect(file.committed()).toEqual(["d"])
      file.close()
    }))

  it.live("after-commit effects run once the group has committed", () =>
    Effect.gen(function*() {
      const file = openFile({ reader: true })
      const seen: Array<ReadonlyArray<string>> = []
      yield* Effect.forEach(
        ["a", "b", "c"],
        (id) => file.tx.transaction(Effect.zipRight(file.insert(id), file.tx.afterCommit(Effect.sync(() => seen.push(file.committed()))))),
        { concurrency: "unbounded" }
      )
      expect(seen).toEqual([["a", "b", "c"], ["a", "b", "c"], ["a", "b", "c"]])
      file.close()
    }))

  it.live("a write interrupted while it waits for its group's COMMIT is still committed and answered", () =>
    Effect.gen(function*() {
      const file = openFile({ reader: true })
      const fiber = yield* writtenAwaitingCommit(file, "a")
      const exit = yield* Fiber.interrupt(fiber)
      // The wait is not interruptible: the interruption lands once the write is durable.
      expect(file.committed()).toEqual(["a"])
      expect(Exit.isInterrupted(exit)).toBe(true)
      expect(file.writer.inTransaction).toBe(false)
      file.close()
    }))

  it.live("with one connection every write commits on its own", () =>
    Effect.gen(function*() {
      const file = openFile({ reader: false })
      const results = yield* Effect.forEach(["a", "b", "c"], (id) => Effect.either(file.tx.transaction(file.insert(id))), {
        concurrency: "unbounded"
      })
      expect(results.every((result) => result._tag === "Right")).toBe(true)
      expect(file.commits).toEqual([1, 1, 1])
      file.close()
    }))

  it.live("a second storage of the file in this process waits its turn instead of blocking on the first's open group", () =>
    Effect.gen(function*() {
      const file = openFile({ reader: true })
      const other = file.another()
      const first = yield* writtenAwaitingCommit(file, "a")
      // The first storage's group still holds the file's write lock. A BEGIN on the second
      // that waited for it in busy_timeout would block this event loop, which commits it.
      yield* other.tx.transaction(other.insert("b"))
      yield* Fiber.join(first)
      expect(file.commits).toEqual([1])
      expect(other.commits).toEqual([1])
      expect(other.committed()).toEqual(["a", "b"])
      file.close()
    }))

  it.live("a storage failure inside a write is that write's failure alone", () =>
    Effect.gen(function*() {
      const file = openFile({ reader: true })
      const exits = yield* Effect.forEach(
        ["a", "a", "b"],
        (id) => Effect.either(file.tx.transaction(file.insert(id))),
        { concurrency: "unbounded" }
      )
      expect(exits.map((exit) => exit._tag)).toEqual(["Right", "Left", "Right"])
      expect((exits[1] as { left: StorageFailure }).left.detail).toContain("UNIQUE constraint failed")
      expect(file.committed()).toEqual(["a", "b"])
      expect(file.commits).toEqual([2])
      file.close()
    }))
})
