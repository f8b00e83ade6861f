import { afterAll, describe, expect, it } from "@effect/vitest"
import Database from "better-sqlite3"
import { Deferred, Effect, Fiber, Option } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { sqliteDialect } from "../../adapters/sql/dialects.js"
import { limitSql, orderSql, quote, shapeOf, tableOf, whereSql } from "../../adapters/sql/query.js"
import { SqliteStorageLive } from "../../adapters/sqlite/layer.js"
import { sampleBooking } from "../../src/events/samples.js"
import { BookingsCollection } from "../../src/ports/collections.js"
import { endedBy } from "../../src/services/Services.js"
import { type CollectionSpec, type ListQuery, ListOfField, Storage } from "../../src/ports/storage.js"
import { acrossTenantScans, fillForScan, scanStatement, withoutAcrossTenantIndexes } from "./acrossTenants.js"
import {
  as,
  event,
  expectSeriesAttendees,
  storageContract,
  storeSeriesBeforeAttendees,
  tenantA,
  tenantB,
  type Thing,
  thing,
  Things
} from "./contract.js"

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "slotwise-sqlite-"))
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))

let files = 0
const freshFile = () => path.join(dir, `store-${++files}.db`)

storageContract("sqlite", () => SqliteStorageLive({ filename: freshFile() }))

/** Runs `body` on a storage over `filename`, closing the database afterwards. */
const withStorage = <A, E>(filename: string, body: Effect.Effect<A, E, Storage>) => Effect.provide(body, SqliteStorageLive({ filename }))

const inspect = <A>(filename: string, f: (db: Database.Database) => A): A => {
  const db = new Database(filename, { readonly: true })
  try {
    return f(db)
  } finally {
    db.close()
  }
}

/** SQLite's plan for `text` on `filename`, a line per step. */
const planOf = (filename: string, text: string, params: ReadonlyArray<unknown>): Array<string> =>
  inspect(filename, (db) => (db.prepare(`EXPLAIN QUERY PLAN ${text}`).all(...params) as Array<{ detail: string }>).map((row) => row.detail))

describe("sqlite storage", () => {
  it.live("data survives closing and reopening the file", () =>
    Effect.gen(function*() {
      const filename = freshFile()
      const appended = event("client.created")
      yield* withStorage(
        filename,
        Effect.gen(function*() {
          const storage = yield* Storage
          yield* storage.transaction(Effect.gen(function*() {
            yield* storage.collection(Things).insert(thing("t1", 1, "kept"))
            yield* storage.events.append(appended)
          }))
        }).pipe(as(tenantA))
      )
      yield* withStorage(
        filename,
        Effect.gen(function*() {
          const storage = yield* Storage
          expect(yield* storage.collection(Things).get("t1")).toEqual(Option.some(thing("t1", 1, "kept")))
          const [stored] = yield* storage.events.read({ after: 0, limit: 10 })
          expect(stored?.event).toEqual(appended)
          expect(yield* storage.events.lastSeq).toBe(stored?.seq)
          expect(yield* storage.events.get(appended.id)).toEqual(Option.some(appended))
        }).pipe(as(tenantA))
      )
    }))

  it.live("sets up WAL, the core's tables and their indexes at start", () =>
    Effect.gen(function*() {
      const filename = freshFile()
      yield* withStorage(filename, Effect.void)
      inspect(filename, (db) => {
        expect(db.pragma("journal_mode", { simple: true })).toBe("wal")
        const tables = (db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as Array<
          { name: string }
        >).map((t) => t.name)
        expect(tables).toEqual(expect.arrayContaining(["slotwise_migrations", "events", "c_bookings", "c_holds"]))
        const columns = db.prepare("SELECT name, type FROM pragma_table_info('c_bookings')").all() as Array<
          { name: string; type: string }
        >
        expect(columns.map((c) => c.name)).toEqual(
          expect.arrayContaining(["account_id", "environment", "id", "doc", ...Object.keys(BookingsCollection.indexes)])
        )
        expect(columns.find((c) => c.name === "start_ms")?.type).toBe("INTEGER")
        const indexes = (db.prepare("SELECT name FROM pragma_index_list('c_bookings')").all() as Array<
          { name: string }
        >).map((i) => i.name)
        // Exactly the column groups the spec asks for: each extra index would cost every write.
        expect(indexes.filter((name) => name.startsWith("ix_")).sort()).toEqual(
          BookingsCollection.storageIndexes!.map((group) => `ix_c_bookings_${group.join("__")}`).sort()
        )
      })
    }))

  it.live("a spec that grows an index column migrates its table and back-fills it", () =>
    Effect.gen(function*() {
      interface Sized extends Thing {
        readonly size: number
      }
      const v1: CollectionSpec<Sized> = {
        name: "growing",
        indexes: { kind: { type: "text", get: (t) => t.kind } },
        order: []
      }
      const v2: CollectionSpec<Sized> = {
        name: "growing",
        indexes: { kind: v1.indexes.kind!, size: { type: "integer", get: (t) => t.size } },
        order: ["size"]
      }
      const filename = freshFile()
      const docs = [3, 1, 2].map((size, i): Sized => ({ ...thing(`g${i}`, i), size }))
      yield* withStorage(
        filename,
        Effect.flatMap(Storage, (s) => Effect.forEach(docs, (d) => s.collection(v1).insert(d))).pipe(as(tenantA))
      )
      yield* withStorage(
        filename,
        Effect.gen(function*() {
          const grown = (yield* Storage).collection(v2)
          expect(yield* grown.listIndexes({ where: [{ column: "size", op: "gte", value: 2 }] })).toEqual([
            { id: "g2", kind: "plain", size: 2 },
            { id: "g0", kind: "plain", size: 3 }
          ])
          yield* grown.insert({ ...thing("g3", 3), size: 0 })
          expect((yield* grown.list({})).map((d) => d.id)).toEqual(["g3", "g1", "g2", "g0"])
        }).pipe(as(tenantA))
      )
      inspect(filename, (db) => {
        const steps = (db.prepare("SELECT id FROM slotwise_migrations").all() as Array<{ id: string }>).map((r) => r.id)
        expect(steps).toEqual(expect.arrayContaining(["events", "c_growing", "c_growing.size"]))
      })
    }))

  it.live("a spec that adds a document field writes it into the earlier documents, once", () =>
    Effect.gen(function*() {
      interface Labelled extends Thing {
        readonly labels?: ReadonlyArray<string>
      }
      const v1: CollectionSpec<Labelled> = { name: "labelled", indexes: { kind: { type: "text", get: (t) => t.kind } }, order: [] }
      const v2: CollectionSpec<Labelled> = { ...v1, addedFields: { labels: [] } }
      const filename = freshFile()
      yield* withStorage(
        filename,
        Effect.flatMap(Storage, (s) =>
          Effect.forEach([thing("old", 1), { ...thing("given", 2), labels: ["kept"] }], (d) => s.collection(v1).insert(d))).pipe(
            as(tenantA)
          )
      )
      const reopened = Effect.flatMap(Storage, (s) =>
        s.collection(v2).list({})).pipe(as(tenantA))
      expect(yield* withStorage(filename, reopened)).toEqual([
        { ...thing("given", 2), labels: ["kept"] },
        { ...thing("old", 1), labels: [] }
      ])
      // The step is recorded: a later start leaves documents as they are.
      inspect(filename, (db) => {
        const steps = (db.prepare("SELECT id FROM slotwise_migrations").all() as Array<{ id: string }>).map((r) => r.id)
        expect(steps).toEqual(expect.arrayContaining(["c_labelled", "c_labelled.doc.labels"]))
      })
      const raw = new Database(filename)
      raw.prepare("UPDATE c_labelled SET doc = json_remove(doc, '$.labels') WHERE id = 'old'").run()
      raw.close()
      expect(yield* withStorage(filename, reopened)).toContainEqual(thing("old", 1))
    }))

  it.live("a field added as the list of another gets that list in earlier documents (bookings' staff_ids = [staff_id])", () =>
    Effect.gen(function*() {
      interface Listed extends Thing {
        readonly kinds?: ReadonlyArray<string>
      }
      const v1: CollectionSpec<Listed> = { name: "listed", indexes: { kind: { type: "text", get: (t) => t.kind } }, order: [] }
      const v2: CollectionSpec<Listed> = { ...v1, addedFields: { kinds: new ListOfField("kind") } }
      const filename = freshFile()
      yield* withStorage(
        filename,
        Effect.flatMap(
          Storage,
          (s) => Effect.forEach([thing("old", 1, "seat"), { ...thing("given", 2), kinds: ["a", "b"] }], (d) => s.collection(v1).insert(d))
        ).pipe(as(tenantA))
      )
      expect(yield* withStorage(filename, Effect.flatMap(Storage, (s) => s.collection(v2).list({})).pipe(as(tenantA)))).toEqual([
        { ...thing("given", 2), kinds: ["a", "b"] },
        { ...thing("old", 1, "seat"), kinds: ["seat"] }
      ])
    }))

  it.live("series stored before they kept their attendees get them from their own tenant's occurrences", () =>
    Effect.gen(function*() {
      const filename = freshFile()
      yield* withStorage(filename, Effect.flatMap(Storage, storeSeriesBeforeAttendees))
      // As if the file predated the step.
      const raw = new Database(filename)
      raw.prepare("DELETE FROM slotwise_migrations WHERE id LIKE 'c_booking_series.doc.%'").run()
      raw.close()
      yield* withStorage(filename, Effect.flatMap(Storage, expectSeriesAttendees))
    }))

  it.live("documents an earlier version stored with an unpaired surrogate read with U+FFFD in its place once a field is added", () =>
    Effect.gen(function*() {
      interface Labelled extends Thing {
        readonly labels?: ReadonlyArray<string>
      }
      const v1: CollectionSpec<Labelled> = { name: "lone", indexes: { kind: { type: "text", get: (t) => t.kind } }, order: [] }
      const v2: CollectionSpec<Labelled> = { ...v1, addedFields: { labels: [] } }
      const stored = [
        { ...thing("a-high", 1), note: "a\ud800b" },
        { ...thing("b-low", 2), note: "\udc00" },
        { ...thing("c-paired", 3), note: "\ud83d\ude00" },
        // A backslash and `ud800` as text: nothing to repair.
        { ...thing("d-escaped", 4), note: "\\ud800" }
      ]
      const filename = freshFile()
      yield* withStorage(
        filename,
        Effect.flatMap(Storage, (s) => Effect.forEach(stored, (d) => s.collection(v1).insert(d))).pipe(as(tenantA))
      )
      const repaired = ["a\ufffdb", "\ufffd", "\ud83d\ude00", "\\ud800"]
      expect(yield* withStorage(filename, Effect.flatMap(Storage, (s) => s.collection(v2).list({})).pipe(as(tenantA)))).toEqual(
        stored.map((d, i) => ({ ...d, note: repaired[i], labels: [] }))
      )
    }))

  it.live("a spec that names other storage indexes gets them, and loses the ones it dropped", () =>
    Effect.gen(function*() {
      interface Sized extends Thing {
        readonly size: number
      }
      const indexes = {
        kind: { type: "text", get: (t: Sized) => t.kind },
        size: { type: "integer", get: (t: Sized) => t.size }
      } as const
      const v1: CollectionSpec<Sized> = { name: "reindexed", indexes, order: [] }
      const v2: CollectionSpec<Sized> = { name: "reindexed", indexes, order: [], storageIndexes: [["kind", "size"]] }
      const filename = freshFile()
      const names = () =>
        inspect(filename, (db) =>
          (db.prepare("SELECT name FROM pragma_index_list('c_reindexed')").all() as Array<{ name: string }>)
            .map((i) => i.name).filter((n) => n.startsWith("ix_")).sort())
      yield* withStorage(
        filename,
        Effect.flatMap(Storage, (s) => s.collection(v1).insert({ ...thing("r0", 0), size: 5 })).pipe(as(tenantA))
      )
      expect(names()).toEqual(["ix_c_reindexed_kind", "ix_c_reindexed_size"])
      yield* withStorage(
        filename,
        Effect.gen(function*() {
          const c = (yield* Storage).collection(v2)
          expect(yield* c.listIndexes({ where: [{ column: "kind", op: "eq", value: "plain" }, { column: "size", op: "gt", value: 4 }] }))
            .toEqual([{ id: "r0", kind: "plain", size: 5 }])
        }).pipe(as(tenantA))
      )
      expect(names()).toEqual(["ix_c_reindexed_kind__size"])
    }))

  it.live("an index led by a sparse column leaves null rows out, and is made again when that changes", () =>
    Effect.gen(function*() {
      interface Tagged extends Thing {
        readonly tag: string | null
      }
      const indexes = { tag: { type: "text", get: (t: Tagged) => t.tag } } as const
      const full: CollectionSpec<Tagged> = { name: "tagged", indexes, order: [] }
      const sparse: CollectionSpec<Tagged> = { ...full, sparseColumns: ["tag"] }
      const filename = freshFile()
      const partial = () =>
        inspect(filename, (db) =>
          (db.prepare("SELECT name, partial FROM pragma_index_list('c_tagged')").all() as Array<{ name: string; partial: number }>)
            .filter((i) =>
              i.name.startsWith("ix_")
            ))
      const tagged = (spec: CollectionSpec<Tagged>) =>
        Effect.gen(function*() {
          const c = (yield* Storage).collection(spec)
          return yield* c.listIndexes({ where: [{ column: "tag", op: "in", value: ["a", "b"] }] })
        }).pipe(as(tenantA))
      yield* withStorage(
        filename,
        Effect.flatMap(Storage, (s) =>
          Effect.zipRight(
            s.collection(full).insert({ ...thing("t0", 0), tag: "a" }),
            s.collection(full).insert({ ...thing("t1", 1), tag: null })
          ))
          .pipe(as(tenantA))
      )
      expect(partial()).toEqual([{ name: "ix_c_tagged_tag", partial: 0 }])
      expect(yield* withStorage(filename, tagged(sparse))).toEqual([{ id: "t0", tag: "a" }])
      expect(partial()).toEqual([{ name: "ix_c_tagged_tag", partial: 1 }])
      expect(yield* withStorage(filename, tagged(full))).toEqual([{ id: "t0", tag: "a" }])
      expect(partial()).toEqual([{ name: "ix_c_tagged_tag", partial: 0 }])
    }))

  it.live("an index across tenants serves the ordered scans of listAcrossTenants", () =>
    Effect.gen(function*() {
      const due: CollectionSpec<Thing> = { ...Things, name: "due_things", acrossTenantIndexes: [["rank"]] }
      const filename = freshFile()
      const found = yield* withStorage(
        filename,
        Effect.gen(function*() {
          const c = (yield* Storage).collection(due)
          yield* Effect.forEach([[tenantA, 3], [tenantB, 1], [tenantA, 2]] as const, ([tenant, rank]) =>
            c.insert(thing(`t${rank}`, rank)).pipe(as(tenant)))
          return yield* c.listAcrossTenants({ where: [{ column: "rank", op: "gt", value: 1 }], limit: 1 })
        })
      )
      expect(found.map((row) =>
        row.doc.id
      )).toEqual(["t2"])
      const plan = planOf(
        filename,
        "SELECT account_id, environment, doc FROM c_due_things WHERE rank > ? ORDER BY rank, id, account_id, environment LIMIT 1",
        [1]
      )
      expect(plan).toEqual([expect.stringContaining("USING INDEX ix_c_due_things_rank___across_tenants")])
    }))

  it.live("a new collection first used in a failed transaction is prepared again next time", () =>
    withStorage(
      freshFile(),
      Effect.gen(function*() {
        const storage = yield* Storage
        const fresh = storage.collection<Thing>({ ...Things, name: "late_comer" })
        yield* Effect.either(storage.transaction(Effect.zipRight(fresh.insert(thing("x", 1)), Effect.fail("no"))))
        expect(yield* fresh.list({})).toEqual([])
        yield* fresh.insert(thing("y", 2))
        expect((yield* fresh.list({})).map((d) => d.id)).toEqual(["y"])
      }).pipe(as(tenantB))
    ))

  it.live("faults stay typed: a file that cannot be opened, an unknown column, a changed index type", () =>
    Effect.gen(function*() {
      const missing = yield* Effect.flip(
        withStorage(path.join(dir, "no-such-dir", "x.db"), Effect.void)
      )
      expect(missing._tag).toBe("StorageFailure")

      const filename = freshFile()
      const unknown = yield* Effect.flip(withStorage(
        filename,
        Effect.flatMap(Storage, (s) => s.collection(Things).list({ where: [{ column: "nope", op: "eq", value: 1 }] })).pipe(as(tenantA))
      ))
      expect(unknown._tag).toBe("StorageFailure")
      const unknownGroup = yield* Effect.flip(withStorage(
        filename,
        Effect.flatMap(Storage, (s) => s.collection(Things).listColumns({ groupBy: "nope", columns: ["rank"] })).pipe(as(tenantA))
      ))
      expect(unknownGroup.detail).toContain("no index column nope")

      const retyped = yield* Effect.flip(withStorage(
        filename,
        Effect.flatMap(Storage, (s) =>
          s.collection<Thing>({
            ...Things,
            indexes: { ...Things.indexes, rank: { type: "text", get: (t) => `${t.rank}` } }
          })
            .list({})).pipe(as(tenantA))
      ))
      expect(retyped._tag).toBe("StorageFailure")
      expect(retyped.detail).toContain("rank")
    }))

  it.live("a BEGIN IMMEDIATE still busy after busy_timeout is retried until the lock frees", () =>
    Effect.gen(function*() {
      const filename = freshFile()
      yield* withStorage(filename, Effect.void)
      const blocker = new Database(filename)
      blocker.exec("BEGIN IMMEDIATE")
      // Frees the lock while the adapter is between retries (its busy wait blocks the thread).
      const timer = setTimeout(() => blocker.exec("COMMIT"), 150)
      try {
        yield* Effect.provide(
          Effect.flatMap(Storage, (s) => s.collection(Things).insert(thing("after-busy", 1))).pipe(as(tenantA)),
          SqliteStorageLive({ filename, busyTimeoutMs: 20 })
        )
        yield* withStorage(
          filename,
          Effect.flatMap(Storage, (s) => s.collection(Things).get("after-busy")).pipe(
            as(tenantA),
            Effect.map((found) => expect(Option.isSome(found)).toBe(true))
          )
        )
      } finally {
        clearTimeout(timer)
        blocker.close()
      }
    }))

  it.live("a lock that never frees ends in a typed StorageFailure, not a defect", () =>
    Effect.gen(function*() {
      const filename = freshFile()
      yield* withStorage(filename, Effect.void)
      const blocker = new Database(filename)
      try {
        const error = yield* Effect.provide(
          Effect.gen(function*() {
            const storage = yield* Storage
            blocker.exec("BEGIN IMMEDIATE")
            return yield* Effect.flip(storage.collection(Things).insert(thing("never", 1)))
          }).pipe(as(tenantA)),
          SqliteStorageLive({ filename, busyTimeoutMs: 10 })
        )
        expect(error._tag).toBe("StorageFailure")
        expect(error.detail).toMatch(/begin transaction/)
      } finally {
        blocker.close()
      }
    }))

  it.live("a file made with the earlier layout (rowid tables, AUTOINCREMENT log) is converted in place", () =>
    Effect.gen(function*() {
      const filename = freshFile()
      const old = new Database(filename)
      old.pragma("journal_mode = WAL")
      old.exec(`CREATE TABLE slotwise_migrations (id TEXT PRIMARY KEY, applied_at INTEGER NOT NULL);
        CREATE TABLE events (seq INTEGER PRIMARY KEY AUTOINCREMENT, account_id TEXT NOT NULL, environment TEXT NOT NULL,
          id TEXT NOT NULL UNIQUE, type TEXT NOT NULL, doc TEXT NOT NULL);
        CREATE INDEX ix_events_tenant ON events (account_id, environment, seq);
        CREATE TABLE c_contract_things (account_id TEXT NOT NULL, environment TEXT NOT NULL, id TEXT NOT NULL,
          kind TEXT, rank INTEGER, stale TEXT, doc TEXT NOT NULL, PRIMARY KEY (account_id, environment, id));
        CREATE INDEX ix_c_contract_things_kind ON c_contract_things (account_id, environment, kind, id);`)
      const insertThing = old.prepare("INSERT INTO c_contract_things VALUES (?, ?, ?, ?, ?, 'x', ?)")
      for (const t of [thing("t2", 2, "b"), thing("t1", 1, "a", "red")]) {
        insertThing.run(tenantA.account_id, tenantA.environment, t.id, t.kind, t.rank, JSON.stringify(t))
      }
      const kept = [event(), event(), event()]
      const insertEvent = old.prepare("INSERT INTO events (account_id, environment, id, type, doc) VALUES (?, ?, ?, ?, ?)")
      for (const e of kept) insertEvent.run(tenantA.account_id, tenantA.environment, e.id, e.type, JSON.stringify(e))
      // Two more events were appended and erased: AUTOINCREMENT remembers seq 5.
      old.exec("UPDATE sqlite_sequence SET seq = 5 WHERE name = 'events'")
      old.close()

      yield* withStorage(
        filename,
        Effect.gen(function*() {
          const storage = yield* Storage
          const things = storage.collection(Things)
          expect(yield* things.list({})).toEqual([thing("t1", 1, "a", "red"), thing("t2", 2, "b")])
          // The `tag` column did not exist: it was derived from the documents.
          expect(yield* things.listIndexes({ where: [{ column: "tag", op: "eq", value: "red" }] })).toEqual([
            { id: "t1", kind: "a", rank: 1, tag: "red" }
          ])
          expect((yield* storage.events.read({ after: 0, limit: 10 })).map((s) => s.event)).toEqual(kept)
          expect(yield* storage.events.lastSeq).toBe(5)
          const next = event()
          yield* storage.events.append(next)
          expect((yield* storage.events.read({ after: 3, limit: 10 })).map((s) => [s.seq, s.event.id])).toEqual([
            [6, next.id]
          ])
          yield* things.insert(thing("t3", 3))
        }).pipe(as(tenantA))
      )

      inspect(filename, (db) => {
        const sqlOf = (name: string) => (db.prepare("SELECT sql FROM sqlite_master WHERE name = ?").get(name) as { sql: string }).sql
        expect(sqlOf("c_contract_things")).toMatch(/WITHOUT ROWID/)
        expect(sqlOf("events")).not.toMatch(/AUTOINCREMENT/)
        expect(sqlOf("c_bookings")).toMatch(/WITHOUT ROWID/)
        expect(db.prepare("SELECT count(*) AS n FROM c_contract_things").get()).toEqual({ n: 3 })
        const steps = (db.prepare("SELECT id FROM slotwise_migrations").all() as Array<{ id: string }>).map((r) => r.id)
        expect(steps).toEqual(expect.arrayContaining(["c_contract_things.without_rowid", "events.without_autoincrement"]))
      })
      // Opening it again changes nothing.
      yield* withStorage(
        filename,
        Effect.flatMap(Storage, (s) => s.collection(Things).list({})).pipe(
          as(tenantA),
          Effect.map((docs) => expect(docs.map((d) => d.id)).toEqual(["t1", "t2", "t3"]))
        )
      )
    }))

  it.live("on a file, a read outside a transaction answers at once while another fiber's transaction is open", () =>
    withStorage(
      freshFile(),
      Effect.gen(function*() {
        const storage = yield* Storage
        const things = storage.collection(Things)
        yield* things.insert(thing("committed", 1))
        const opened = yield* Deferred.make<void>()
        const release = yield* Deferred.make<void>()
        const writer = yield* Effect.fork(storage.transaction(Effect.gen(function*() {
          yield* things.insert(thing("pending", 2))
          yield* Deferred.succeed(opened, undefined)
          yield* Deferred.await(release)
        })))
        yield* Deferred.await(opened)
        // The writer holds its transaction until released, so a read that waited for it would
        // wait forever: the bound only names that failure, far beyond a busy machine's pauses.
        const seen = yield* things.list({}).pipe(Effect.timeoutFail({ duration: "10 seconds", onTimeout: () => "waited" }))
        expect(seen.map((t) => t.id)).toEqual(["committed"])
        yield* Deferred.succeed(release, undefined)
        yield* Fiber.join(writer)
        expect((yield* things.list({})).map((t) => t.id)).toEqual(["committed", "pending"])
      }).pipe(as(tenantA))
    ))

  it.live("event seqs stay gapless through undone group members, failed appends and other connections' appends", () => {
    const filename = freshFile()
    return withStorage(
      filename,
      Effect.gen(function*() {
        const storage = yield* Storage
        const { events } = storage
        yield* events.append(event())
        const first = yield* events.lastSeq
        // Started together: the second and third join the first's group behind savepoints,
        // and the second is undone to its savepoint, its event with it.
        const [kept, undone, next] = [event(), event(), event()]
        const exits = yield* Effect.forEach(
          [events.append(kept), Effect.zipRight(events.append(undone), Effect.fail("refused" as const)), events.append(next)],
          (write) => Effect.exit(storage.transaction(write)),
          { concurrency: "unbounded" }
        )
        expect(exits.map((exit) => exit._tag)).toEqual(["Success", "Failure", "Success"])
        // An append that fails (a duplicate id) inside a write that goes on takes no seq.
        const [duplicated, after] = [event(), event()]
        yield* storage.transaction(Effect.gen(function*() {
          yield* events.append(duplicated)
          expect((yield* Effect.flip(events.append(duplicated)))._tag).toBe("StorageFailure")
          yield* events.append(after)
        }))
        const seqs = (yield* events.readAcrossTenants({ after: first, limit: 10 })).map((stored) => [stored.event.id, stored.seq])
        expect(seqs).toEqual([[kept.id, first + 1], [next.id, first + 2], [duplicated.id, first + 3], [after.id, first + 4]])

        // Another connection (another process) appends between two writes: the next takes the seq after it.
        const elsewhere = event()
        const other = new Database(filename)
        other.prepare("INSERT INTO events (seq, account_id, environment, id, type, doc) VALUES (?, ?, ?, ?, ?, ?)")
          .run(first + 5, tenantA.account_id, tenantA.environment, elsewhere.id, elsewhere.type, JSON.stringify(elsewhere))
        other.close()
        const last = event()
        yield* events.append(last)
        const [stored] = yield* events.readAcrossTenants({ after: first + 5, limit: 10 })
        expect([stored?.event.id, stored?.seq]).toEqual([last.id, first + 6])
      }).pipe(as(tenantA))
    )
  })

  it.live("a busy file is checkpointed by the worker thread, not by its commits", () =>
    Effect.gen(function*() {
      /**
       * Frames in the WAL and frames already copied into the database, from the WAL-index
       * header in the -shm file (SQLite's documented WAL format: mxFrame at byte 16,
       * nBackfill at byte 96, native byte order).
       */
      const walState = (filename: string) => {
        const shm = fs.readFileSync(`${filename}-shm`)
        return { frames: shm.readUInt32LE(16), checkpointed: shm.readUInt32LE(96) }
      }
      /**
       * Commits 220 small documents one by one, then reports the WAL while still open: with
       * the worker, once it has checkpointed (however long a busy machine makes that take);
       * without it, at once, since nothing else runs that could checkpoint later.
       */
      const fill = (filename: string, checkpointInBackground: boolean) =>
        Effect.provide(
          Effect.gen(function*() {
            // No index columns: about one frame a commit.
            const plain = (yield* Storage).collection<Thing>({ name: "plain_things", indexes: {}, order: [] })
            for (let i = 0; i < 220; i++) yield* plain.insert(thing(`t${i}`, i))
            // The worker checkpoints every 100 ms; the test's timeout bounds a worker that never does.
            while (checkpointInBackground && walState(filename).checkpointed === 0) yield* Effect.sleep("20 millis")
            return walState(filename)
          }).pipe(as(tenantA)),
          SqliteStorageLive({ filename, checkpointInBackground })
        )
      // Fewer frames than SQLite's own threshold (1,000): only the worker checkpoints them.
      const withWorker = yield* fill(freshFile(), true)
      expect(withWorker.frames).toBeLessThan(1000)
      expect(withWorker.checkpointed).toBeGreaterThan(0)
      const withoutWorker = yield* fill(freshFile(), false)
      expect(withoutWorker.frames).toBeGreaterThan(200)
      expect(withoutWorker.checkpointed).toBe(0)
    }))

  it.live("works on a private in-memory database", () =>
    withStorage(
      ":memory:",
      Effect.gen(function*() {
        const things = (yield* Storage).collection(Things)
        yield* things.insert(thing("m", 1))
        expect((yield* things.list({})).map((d) => d.id)).toEqual(["m"])
      }).pipe(as(tenantA))
    ))
})

describe("sqlite: the workers' scans across tenants", () => {
  for (const scan of acrossTenantScans) {
    it.live(`${scan.name}: reads its index across tenants, made on an existing table too`, () =>
      Effect.gen(function*() {
        const filename = freshFile()
        yield* withStorage(
          filename,
          Effect.flatMap(Storage, (storage) => fillForScan(storage, withoutAcrossTenantIndexes(scan.spec), scan))
        )
        yield* withStorage(filename, Effect.flatMap(Storage, (storage) => storage.collection(scan.spec).listAcrossTenants(scan.query)))
        const { params, text } = scanStatement(sqliteDialect, scan)
        const plan = planOf(filename, text, params)
        const index = `ix_${tableOf(scan.spec)}_${scan.index.join("__")}___across_tenants`
        expect(plan).toEqual(expect.arrayContaining([expect.stringMatching(new RegExp(`^SEARCH .* USING INDEX ${index} `))]))
        expect(plan.some((detail) => detail.includes("TEMP B-TREE"))).toBe(!scan.ordered)
      }))
  }
})

describe("sqlite: documents read back", () => {
  // A document's text is parsed once and the value shared by every reader (as the memory
  // storage shares its documents): frozen through, so a use case that changed one in place
  // would fail at once instead of changing what the next reader, or a reader after a
  // rollback, gets.
  it.live("are one frozen value per stored text: read twice, the same; changed, the new one; rolled back, the old", () =>
    Effect.gen(function*() {
      const storage = yield* Storage
      const bookings = storage.collection(BookingsCollection)
      const stored = { ...sampleBooking(Date.parse("2030-03-04T09:00:00Z")), metadata: { source: "test" } }
      yield* bookings.insert(stored)
      const first = Option.getOrThrow(yield* bookings.get(stored.id))
      const again = Option.getOrThrow(yield* bookings.get(stored.id))
      const listed = (yield* bookings.list({ where: [{ column: "staff_id", op: "eq", value: stored.staff_id }] }))[0]
      expect(first).toEqual(stored)
      expect(again).toBe(first)
      expect(listed).toBe(first)
      expect([first, first.staff_ids, first.metadata, first.answers].every(Object.isFrozen)).toBe(true)
      expect(() => {
        ;(first as { status: string }).status = "cancelled"
      }).toThrow(TypeError)
      expect(() => (first.staff_ids as Array<string>).push("stf_other")).toThrow(TypeError)

      const cancelled = { ...stored, status: "cancelled" as const }
      yield* bookings.update(cancelled)
      expect(Option.getOrThrow(yield* bookings.get(stored.id))).toEqual(cancelled)

      const undone = yield* Effect.either(storage.transaction(Effect.zipRight(bookings.update(stored), Effect.fail("undo"))))
      expect(undone._tag).toBe("Left")
      expect(Option.getOrThrow(yield* bookings.get(stored.id))).toEqual(cancelled)
      yield* bookings.update(stored)
      expect(Option.getOrThrow(yield* bookings.get(stored.id))).toBe(first)
    }).pipe(as(tenantA), Effect.provide(SqliteStorageLive({ filename: freshFile() }))))
})

describe("sqlite: a page of bookings by one filter", () => {
  // A page by staff member, status, service or client reads that column's index in start
  // order and stops at the page's end: no sort of all the matching bookings, and no walk past
  // everyone else's in start order (which took 16–20 ms a page beside 30,000–60,000 other
  // bookings). Past bookings (`upcoming=false`) stop the scan by start at now.
  const cases: ReadonlyArray<{ readonly name: string; readonly where: NonNullable<ListQuery["where"]>; readonly search: string }> = [
    ...(["staff_id", "status", "service_id", "client_id"] as const).map((column) => ({
      name: `by ${column}`,
      where: [{ column, op: "eq", value: "x_1" }] as const,
      search: `USING INDEX ix_c_bookings_${column}__start_ms (account_id=? AND environment=? AND ${column}=?)`
    })),
    {
      name: "ended by now",
      where: endedBy(1_800_000_000_000),
      search: "USING INDEX ix_c_bookings_start_ms (account_id=? AND environment=? AND start_ms<?)"
    }
  ]
  for (const { name, search, where } of cases) {
    it.live(`${name}: its index, in start order, bounded`, () =>
      Effect.gen(function*() {
        const filename = freshFile()
        const query: ListQuery = { where, limit: 21 }
        yield* withStorage(
          filename,
          Effect.flatMap(Storage, (storage) => storage.collection(BookingsCollection).list(query)).pipe(as(tenantA))
        )
        const shape = shapeOf(BookingsCollection)
        const params: Array<unknown> = []
        const text = `SELECT doc FROM ${quote(tableOf(BookingsCollection))} ${whereSql(sqliteDialect, shape, query, tenantA, params)} ` +
          `${orderSql(sqliteDialect, shape.keys)}${limitSql(query.limit)}`
        const plan = planOf(filename, text, params)
        expect(plan).toEqual([`SEARCH c_bookings ${search}`])
      }))
  }
})
