/**
 * PostgreSQL-specific guarantees beyond the contract suite: the event feed in commit order
 * across separate pools, migrations from instances starting together, typed failures.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Context, Effect, Layer, Option } from "effect"
import pg from "pg"
import { PostgresStorageLive } from "../../adapters/postgres/layer.js"
import { postgresDialect } from "../../adapters/sql/dialects.js"
import { tableOf } from "../../adapters/sql/query.js"
import type { Booking } from "../../src/bookings/booking.js"
import { sampleBooking } from "../../src/events/samples.js"
import { BookingsCollection, CoreCollections } from "../../src/ports/collections.js"
import { type CollectionSpec, ListOfField, Storage, type StoredEvent } from "../../src/ports/storage.js"
import { acrossTenantScans, fillForScan, scanStatement, withoutAcrossTenantIndexes } from "../storage/acrossTenants.js"
import {
  as,
  event,
  expectSeriesAttendees,
  storeSeriesBeforeAttendees,
  tenantA,
  tenantAProd,
  tenantB,
  type Thing,
  thing,
  Things
} from "../storage/contract.js"
import { waitFor } from "../webhooks/receiver.js"
import { createTestDatabase, type TestDatabase } from "./database.js"

let database: TestDatabase
beforeAll(async () => {
  database = await createTestDatabase()
})
afterAll(() => database.drop())

/** `count` storages on one schema, each with a pool of its own (separate processes, to the database). */
const storages = (schema: string, count: number, url = database.url) =>
  Effect.all(
    Array.from({ length: count }, () =>
      Effect.map(Layer.build(PostgresStorageLive({ url, schema, maxConnections: 4 })), Context.get(Storage))),
    { concurrency: "unbounded" }
  )

describe("postgres event feed", () => {
  it.live("4 writer pools and a poller reading after its cursor: every event exactly once, in order", () =>
    Effect.gen(function*() {
      const [first, ...writers] = yield* storages("feed", 5)
      const reader = first!
      const tenants = [tenantA, tenantAProd, tenantB]
      const PER_WRITER = 4
      const TRANSACTIONS = 15
      const total = writers.length * PER_WRITER * TRANSACTIONS
      // Each transaction appends, then writes a document before it commits: a seq taken
      // early would become visible after later ones, and a poller would skip it.
      const write = (storage: Storage["Type"], w: number) =>
        Effect.forEach(Array.from({ length: TRANSACTIONS }, (_, n) => n), (n) =>
          storage.transaction(Effect.gen(function*() {
            yield* storage.events.append(event("booking.created", { w, n }))
            yield* storage.collection(Things).insert(thing(`w${w}_${n}`, n))
          })).pipe(as(tenants[(w + n) % tenants.length]!)), { discard: true })
      const writing = Effect.all(
        writers.flatMap((storage, p) => Array.from({ length: PER_WRITER }, (_, k) => write(storage, p * PER_WRITER + k))),
        { concurrency: "unbounded", discard: true }
      ).pipe(Effect.ensuring(Effect.sync(() => (finished = true))))
      let finished = false
      const polling = Effect.gen(function*() {
        const seen: Array<StoredEvent> = []
        let cursor = 0
        while (seen.length < total) {
          // Once every writer has committed, an empty page means an event was skipped.
          const last = finished
          const page = yield* reader.events.readAcrossTenants({ after: cursor, limit: 7 })
          seen.push(...page)
          if (page.length > 0) cursor = page[page.length - 1]!.seq
          else if (last) return yield* Effect.dieMessage(`the poller saw ${seen.length} of ${total} events`)
          else yield* Effect.sleep("1 millis")
        }
        return seen
      })
      const [, seen] = yield* Effect.all([writing, polling], { concurrency: "unbounded" })
      const ids = seen.map((s) => s.event.id)
      expect(new Set(ids).size).toBe(total)
      expect(ids).toHaveLength(total)
      for (let i = 1; i < seen.length; i++) expect(seen[i]!.seq).toBeGreaterThan(seen[i - 1]!.seq)
      const all = yield* reader.events.readAcrossTenants({ after: 0, limit: total + 10 })
      expect(all.map((s) => s.event.id)).toEqual(ids)
      expect(yield* reader.events.lastSeq).toBe(seen[seen.length - 1]!.seq)
    }).pipe(Effect.scoped), 60_000)
})

describe("postgres write lock", () => {
  it.live("a transaction begun for one tenant takes the lock of another tenant it checks and writes", () =>
    Effect.gen(function*() {
      const [first, second] = yield* storages("locks", 2)
      // Every pooled connection open first: a pool still connecting serialises the claims.
      for (const storage of [first!, second!]) {
        yield* Effect.all(Array.from({ length: 8 }, () => storage.collection(Things).list({}).pipe(as(tenantB))), {
          concurrency: "unbounded"
        })
      }
      const claim = (storage: Storage["Type"], i: number) =>
        Effect.gen(function*() {
          const things = storage.collection(Things)
          const taken = yield* things.listIndexes({ where: [{ column: "kind", op: "eq", value: "seat" }] })
          yield* Effect.yieldNow()
          if (taken.length === 0) yield* things.insert(thing(`seat_${i}`, i, "seat"))
        }).pipe(as(tenantB))
      // Half begin as tenant A and claim tenant B's seat inside; half begin as tenant B.
      yield* Effect.all(
        Array.from({ length: 40 }, (_, i) => {
          const storage = i % 2 === 0 ? first! : second!
          return storage.transaction(claim(storage, i)).pipe(as(i % 4 < 2 ? tenantA : tenantB))
        }),
        { concurrency: "unbounded", discard: true }
      )
      const seats = yield* first!.collection(Things).list({ where: [{ column: "kind", op: "eq", value: "seat" }] }).pipe(as(tenantB))
      expect(seats).toHaveLength(1)
    }).pipe(Effect.scoped), 60_000)
})

describe("postgres migrations", () => {
  it.live("4 pools starting together on an empty database migrate once, without errors", () =>
    Effect.gen(function*() {
      const empty = yield* Effect.acquireRelease(Effect.promise(() => createTestDatabase()), (db) => Effect.promise(() => db.drop()))
      const started = yield* Effect.scoped(Effect.gen(function*() {
        const four = yield* storages("public", 4, empty.url).pipe(Effect.either)
        if (four._tag === "Right") {
          // Every instance works on the result.
          yield* Effect.forEach(four.right, (s, i) => s.collection(Things).insert(thing(`t${i}`, i)).pipe(as(tenantA)))
        }
        return four
      }))
      expect(started._tag).toBe("Right")
      const client = new pg.Client({ connectionString: empty.url })
      yield* Effect.promise(() => client.connect())
      const query = (text: string) => Effect.promise(() => client.query(text).then((r) => r.rows))
      const tables = (yield* query("SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY tablename"))
        .map((r) => r.tablename as string)
      expect(tables).toEqual(
        ["events", "slotwise_migrations", "slotwise_sequences", ...CoreCollections.map((c) => `c_${c.name}`), "c_contract_things"]
          .sort()
      )
      const steps = yield* query("SELECT id FROM slotwise_migrations ORDER BY id")
      const addedFields = CoreCollections.flatMap((c) => Object.keys(c.addedFields ?? {}).map((field) => `c_${c.name}.doc.${field}`))
      expect(steps.map((r) => r.id)).toEqual(
        ["events", ...CoreCollections.map((c) => `c_${c.name}`), ...addedFields, "c_contract_things"].sort()
      )
      expect(yield* query("SELECT value FROM slotwise_sequences")).toEqual([{ value: "0" }])
      expect((yield* query("SELECT count(*)::int AS n FROM c_contract_things"))[0]).toEqual({ n: 4 })
      yield* Effect.promise(() => client.end())
    }).pipe(Effect.scoped), 60_000)

  it.live("a spec that adds a document field writes it into the earlier documents, once", () =>
    Effect.gen(function*() {
      const v1: CollectionSpec<Thing & { readonly labels?: ReadonlyArray<string> }> = { ...Things, name: "labelled" }
      const v2 = { ...v1, addedFields: { labels: [] } }
      const [before] = yield* storages("labelled", 1)
      yield* Effect.forEach([thing("old", 1), { ...thing("given", 2), labels: ["kept"] }], (d) => before!.collection(v1).insert(d)).pipe(
        as(tenantA)
      )
      const [after] = yield* storages("labelled", 1)
      expect(yield* after!.collection(v2).list({}).pipe(as(tenantA))).toEqual([
        { ...thing("old", 1), labels: [] },
        { ...thing("given", 2), labels: ["kept"] }
      ])
      const client = new pg.Client({ connectionString: database.url })
      yield* Effect.promise(() => client.connect())
      const query = (text: string) => Effect.promise(() => client.query(text).then((r) => r.rows))
      expect(yield* query("SELECT id FROM labelled.slotwise_migrations WHERE id LIKE 'c_labelled%' ORDER BY id")).toEqual([
        { id: "c_labelled" },
        { id: "c_labelled.doc.labels" }
      ])
      // Recorded: a later start leaves documents as they are.
      yield* query("UPDATE labelled.c_labelled SET doc = (doc::jsonb - 'labels')::json WHERE id = 'old'")
      yield* Effect.promise(() => client.end())
      const [later] = yield* storages("labelled", 1)
      expect(yield* later!.collection(v2).get("old").pipe(as(tenantA))).toEqual(Option.some(thing("old", 1)))
    }).pipe(Effect.scoped), 60_000)
})

describe("postgres migrations: sparse columns", () => {
  it.live("an index led by a sparse column leaves null rows out, and is made again when that changes", () =>
    Effect.gen(function*() {
      const full: CollectionSpec<Thing> = { ...Things, name: "sparse_kinds", order: [], storageIndexes: [["kind"]] }
      const sparse: CollectionSpec<Thing> = { ...full, sparseColumns: ["kind"] }
      const client = new pg.Client({ connectionString: database.url })
      yield* Effect.promise(() => client.connect())
      const partial = () =>
        Effect.promise(() =>
          client.query(
            "SELECT i.indpred IS NOT NULL AS partial FROM pg_index i JOIN pg_class t ON t.oid = i.indrelid " +
              "JOIN pg_namespace n ON n.oid = t.relnamespace JOIN pg_class c ON c.oid = i.indexrelid " +
              "WHERE n.nspname = 'sparse' AND t.relname = 'c_sparse_kinds' AND c.relname LIKE 'ix\\_%'"
          ).then((r) => r.rows)
        )
      const [before] = yield* storages("sparse", 1)
      yield* before!.collection(full).insert(thing("a", 1, "seat")).pipe(as(tenantA))
      expect(yield* partial()).toEqual([{ partial: false }])
      const [after] = yield* storages("sparse", 1)
      expect(yield* after!.collection(sparse).list({ where: [{ column: "kind", op: "in", value: ["seat"] }] }).pipe(as(tenantA)))
        .toEqual([thing("a", 1, "seat")])
      expect(yield* partial()).toEqual([{ partial: true }])
      const [again] = yield* storages("sparse", 1)
      yield* again!.collection(full).get("a").pipe(as(tenantA))
      expect(yield* partial()).toEqual([{ partial: false }])
      yield* Effect.promise(() => client.end())
    }).pipe(Effect.scoped), 60_000)
})

describe("postgres migrations: indexes across tenants", () => {
  it.live("are in the order of listAcrossTenants, tenant last", () =>
    Effect.gen(function*() {
      const due: CollectionSpec<Thing> = { ...Things, name: "due_things", acrossTenantIndexes: [["rank"]] }
      const [storage] = yield* storages("across", 1)
      const c = storage!.collection(due)
      yield* Effect.forEach([[tenantA, 3], [tenantB, 1], [tenantA, 2]] as const, ([tenant, rank]) =>
        c.insert(thing(`t${rank}`, rank)).pipe(as(tenant)))
      expect((yield* c.listAcrossTenants({ where: [{ column: "rank", op: "gt", value: 1 }], limit: 1 })).map((row) =>
        row.doc.id
      )).toEqual(["t2"])
      const client = new pg.Client({ connectionString: database.url })
      yield* Effect.promise(() =>
        client.connect()
      )
      const definitions = yield* Effect.promise(() =>
        client.query("SELECT indexdef FROM pg_indexes WHERE schemaname = 'across' AND tablename = 'c_due_things'").then((r) =>
          r.rows.map((row) => row.indexdef as string)
        )
      )
      yield* Effect.promise(() => client.end())
      expect(definitions).toEqual(
        expect.arrayContaining([expect.stringContaining("(rank NULLS FIRST, id NULLS FIRST, account_id, environment)")])
      )
    }).pipe(Effect.scoped), 60_000)
})

describe("postgres migrations: a field that lists another", () => {
  it.live("earlier documents get the list of their own field (bookings' staff_ids = [staff_id])", () =>
    Effect.gen(function*() {
      const v1: CollectionSpec<Thing & { readonly kinds?: ReadonlyArray<string> }> = { ...Things, name: "listed" }
      const v2 = { ...v1, addedFields: { kinds: new ListOfField("kind") } }
      const [before] = yield* storages("listed", 1)
      yield* Effect.forEach([thing("old", 1, "seat"), { ...thing("given", 2), kinds: ["a", "b"] }], (d) => before!.collection(v1).insert(d))
        .pipe(as(tenantA))
      const [after] = yield* storages("listed", 1)
      expect(yield* after!.collection(v2).list({}).pipe(as(tenantA))).toEqual([
        { ...thing("old", 1, "seat"), kinds: ["seat"] },
        { ...thing("given", 2), kinds: ["a", "b"] }
      ])
    }).pipe(Effect.scoped), 60_000)
})

describe("postgres migrations: a field kept on related documents", () => {
  it.live("series stored before they kept their attendees get them from their own tenant's occurrences", () =>
    Effect.gen(function*() {
      const [before] = yield* storages("attendees", 1)
      yield* storeSeriesBeforeAttendees(before!)
      const client = new pg.Client({ connectionString: database.url })
      yield* Effect.promise(() => client.connect())
      // As if the database predated the step.
      yield* Effect.promise(() => client.query("DELETE FROM attendees.slotwise_migrations WHERE id LIKE 'c_booking_series.doc.%'"))
      yield* Effect.promise(() => client.end())
      const [after] = yield* storages("attendees", 1)
      yield* expectSeriesAttendees(after!)
    }).pipe(Effect.scoped), 60_000)
})

describe("postgres migrations: documents an earlier version stored with an unpaired surrogate", () => {
  /** Runs `text` on the test database with a connection of its own. */
  const sql = (text: string) =>
    Effect.acquireUseRelease(
      Effect.promise(async () => {
        const client = new pg.Client({ connectionString: database.url })
        await client.connect()
        return client
      }),
      (client) => Effect.promise(() => client.query(text)),
      (client) => Effect.promise(() => client.end())
    )

  it.live("the fill of an added field survives them, and each reads with U+FFFD in its place", () =>
    Effect.gen(function*() {
      const v1: CollectionSpec<Thing & { readonly labels?: ReadonlyArray<string> }> = { ...Things, name: "lone" }
      const v2 = { ...v1, addedFields: { labels: [] } }
      const stored = [
        { ...thing("high", 1), note: "a\ud800b" },
        { ...thing("low", 2), note: "\udc00" },
        { ...thing("paired", 3), note: "\ud83d\ude00" },
        // A backslash and `ud800` as text: nothing to repair.
        { ...thing("escaped", 4), note: "\\ud800" }
      ]
      const [before] = yield* storages("lone", 1)
      yield* Effect.forEach(stored, (d) => before!.collection(v1).insert(d)).pipe(as(tenantA))
      const [after, alongside] = yield* storages("lone", 2)
      const repaired = ["a\ufffdb", "\ufffd", "\ud83d\ude00", "\\ud800"]
      const expected = stored.map((d, i) => ({ ...d, note: repaired[i], labels: [] }))
      expect(yield* after!.collection(v2).list({}).pipe(as(tenantA))).toEqual(expected)
      expect(yield* alongside!.collection(v2).list({}).pipe(as(tenantA))).toEqual(expected)
      // The database reads every document again.
      expect((yield* sql("SELECT doc ->> 'note' AS note FROM lone.c_lone ORDER BY rank")).rows.map((r) => r.note)).toEqual(repaired)
    }).pipe(Effect.scoped), 60_000)

  it.live("core tables: bookings and the series kept on them migrate, and the booking reads", () =>
    Effect.gen(function*() {
      const [before] = yield* storages("lone_core", 1)
      yield* storeSeriesBeforeAttendees(before!)
      // As an earlier version wrote a visitor's notes, and as if the database predated the fills.
      const written = yield* sql(
        `UPDATE lone_core.c_bookings SET doc = regexp_replace(doc::text, '"notes":("[^"]*"|null)', '"notes":"\\\\ud800"')::json`
      )
      expect(written.rowCount).toBeGreaterThan(0)
      yield* sql("DELETE FROM lone_core.slotwise_migrations WHERE id LIKE 'c_bookings.doc.%' OR id LIKE 'c_booking_series.doc.%'")
      const [after] = yield* storages("lone_core", 1)
      yield* expectSeriesAttendees(after!)
      const booking = yield* after!.collection(BookingsCollection).get("bkg_t1").pipe(as(tenantA))
      expect(Option.map(booking, (b) => [b.notes, b.staff_ids])).toEqual(Option.some(["\ufffd", ["stf_a", "stf_b"]]))
    }).pipe(Effect.scoped), 60_000)
})

describe("postgres failures", () => {
  it.live("an unreachable server is a typed StorageFailure at start, marked unavailable, once the start timeout is over", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(
        Effect.scoped(Layer.build(PostgresStorageLive({ url: "postgres://postgres@127.0.0.1:1/none", startTimeoutMs: 300 })))
      )
      expect(error._tag).toBe("StorageFailure")
      expect(error.unavailable).toBe(true)
    }))

  it.live("a document that cannot be serialised is a typed StorageFailure", () =>
    Effect.gen(function*() {
      const [storage] = yield* storages("failures", 1)
      const cyclic: Record<string, unknown> = { ...thing("loop", 1) }
      cyclic.self = cyclic
      const error = yield* Effect.flip(storage!.collection(Things).insert(cyclic as never).pipe(as(tenantA)))
      expect(error._tag).toBe("StorageFailure")
      const bad = yield* Effect.flip(
        storage!.collection(Things).list({ where: [{ column: "nope", op: "eq", value: 1 }] }).pipe(as(tenantA))
      )
      expect(bad.detail).toContain("no index column nope")
    }).pipe(Effect.scoped))
})

describe("postgres: a page by a filter", () => {
  // A page by one staff member (service, client, status) beside many bookings of another:
  // run as a named prepared statement it would get a generic plan after five runs, and that
  // plan cannot tell a staff member with 21 bookings from one with 20,000, so it walks the
  // date index past all of them (~390 ms a page beside 1M). Planned for its values, it reads
  // the staff member's index. Seen from the server's own counters, read once the pool's
  // connections have ended (a backend reports its counts when it exits).
  it.live("is planned for its values: 12 pages read the filtered index, not the others' 20,000 bookings", () =>
    Effect.gen(function*() {
      const schema = "filtered_pages"
      const stats = `SELECT coalesce(sum(i.idx_scan), 0)::int AS scans, coalesce(sum(i.idx_tup_read), 0)::int AS entries,
          max(t.seq_tup_read)::int AS seq FROM pg_stat_user_indexes i JOIN pg_stat_user_tables t USING (relid)
          WHERE i.schemaname = '${schema}' AND i.relname = '${tableOf(BookingsCollection)}'`
      const raw = new pg.Client(database.url)
      yield* Effect.promise(() => raw.connect())
      yield* Effect.addFinalizer(() => Effect.promise(() => raw.end()))
      const PAGES = 12
      const booking = (id: string, staff: string, start: string): Booking => ({
        ...sampleBooking(Date.parse(start)),
        id,
        staff_id: staff,
        staff_ids: [staff],
        start,
        end: start.replace(":00:00Z", ":30:00Z")
      })
      const before = yield* Effect.scoped(Effect.gen(function*() {
        const [storage] = yield* storages(schema, 1)
        const bookings = storage!.collection(BookingsCollection)
        // One real booking of the busy staff member as the template of 20,000 more.
        yield* bookings.insert(booking("bkg_busy", "stf_busy", "2030-01-01T09:00:00Z")).pipe(as(tenantA))
        yield* Effect.promise(() =>
          raw.query(
            `INSERT INTO ${schema}.${tableOf(BookingsCollection)} (account_id, environment, id, staff_id, service_id, client_id, status,
              start_ms, end_ms, occupied_start, occupied_end, doc)
            SELECT account_id, environment, 'bkg_seed' || lpad(g::text, 8, '0'), staff_id, service_id, client_id, status,
              start_ms + g * 60000, end_ms + g * 60000, occupied_start + g * 60000, occupied_end + g * 60000, doc
            FROM ${schema}.${tableOf(BookingsCollection)}, generate_series(1::bigint, 20000) g`
          )
        )
        yield* Effect.promise(() => raw.query(`ANALYZE ${schema}.${tableOf(BookingsCollection)}`))
        for (let i = 0; i < 21; i++)
          yield* bookings.insert(
            booking(`bkg_few${String(i).padStart(2, "0")}`, "stf_few", `2031-01-${String(i + 1).padStart(2, "0")}T09:00:00Z`)
          ).pipe(as(tenantA))
        const counted = (yield* Effect.promise(() => raw.query(stats))).rows[0]
        for (let i = 0; i < PAGES; i++) {
          const page = yield* bookings.list({ where: [{ column: "staff_id", op: "eq", value: "stf_few" }], limit: 21 }).pipe(as(tenantA))
          expect(page.map((b) => b.id)).toHaveLength(21)
        }
        return counted
      }))
      let after = before
      yield* Effect.promise(() =>
        waitFor(
          async () => {
            after = (await raw.query(stats)).rows[0]
            return after.scans >= before.scans + PAGES
          },
          20_000,
          "the pages' index scans in the statistics"
        )
      )
      // 21 entries a page (and the 22nd that ends it), not 20,000.
      expect(after.entries - before.entries).toBeLessThanOrEqual(PAGES * 30)
      expect(after.seq - before.seq).toBe(0)
    }).pipe(Effect.scoped))
})

describe("postgres: the workers' scans across tenants", () => {
  for (const [i, scan] of acrossTenantScans.entries()) {
    it.live(`${scan.name}: reads its index across tenants, made on an existing table too`, () =>
      Effect.gen(function*() {
        const schema = `scan_${i}`
        const [before] = yield* storages(schema, 1)
        yield* fillForScan(before!, withoutAcrossTenantIndexes(scan.spec), scan)
        const [after] = yield* storages(schema, 1)
        yield* after!.collection(scan.spec).listAcrossTenants(scan.query)
        const client = new pg.Client({ connectionString: database.url })
        yield* Effect.promise(() => client.connect())
        const query = (text: string, params: ReadonlyArray<unknown> = []) =>
          Effect.promise(() => client.query(text, [...params]).then((r) => r.rows as Array<Record<string, string>>))
        const columns = [...scan.index, "id"].map((c) => `${c} NULLS FIRST`).join(", ")
        const [index] = yield* query(
          "SELECT indexname FROM pg_indexes WHERE schemaname = $1 AND tablename = $2 AND indexdef LIKE $3",
          [schema, tableOf(scan.spec), `%(${columns}, account_id, environment)`]
        )
        // A few rows make any plan cheap: leave out the table scan to see which index the planner takes.
        yield* query(`SET search_path TO ${schema}`)
        yield* query("SET enable_seqscan = off")
        const { params, text } = scanStatement(postgresDialect, scan)
        const plan = (yield* query(`EXPLAIN ${text}`, params)).map((row) => row["QUERY PLAN"]!)
        yield* Effect.promise(() => client.end())
        expect(index).toBeDefined()
        expect(plan).toEqual(expect.arrayContaining([expect.stringMatching(new RegExp(`Index Scan using ${index!.indexname} `))]))
        expect(plan.some((line) => line.includes("Sort"))).toBe(!scan.ordered)
      }).pipe(Effect.scoped), 60_000)
  }
})

describe("postgres signals", () => {
  it.live("another storage on the database hears each commit's signal; the storage that sent it does not", () =>
    Effect.gen(function*() {
      const [a, b] = yield* storages("signals", 2)
      const heard = { a: 0, b: 0 }
      const sentinels = { a: 0, b: 0 }
      a!.signals!.subscribe("events", () => heard.a++)
      b!.signals!.subscribe("events", () => heard.b++)
      a!.signals!.subscribe("domains", () => sentinels.a++)
      b!.signals!.subscribe("domains", () => sentinels.b++)
      const client = new pg.Client({ connectionString: database.url })
      yield* Effect.promise(() => client.connect())
      const listening = () =>
        client.query("SELECT count(*)::int AS n FROM pg_stat_activity WHERE query = 'LISTEN \"slotwise_signals_signals\"'")
          .then((r) => (r.rows[0] as { n: number }).n === 2)
      yield* Effect.promise(() => waitFor(listening, 10_000, "both storages to LISTEN"))
      const hear = (who: "a" | "b", count: number) =>
        Effect.promise(() => waitFor(() => heard[who] >= count, 10_000, `storage ${who} to hear ${count} signals`))
      const append = (storage: Storage["Type"]) => storage.transaction(storage.events.append(event("client.created"))).pipe(as(tenantA))
      yield* append(a!)
      yield* hear("b", 1)
      yield* append(b!)
      yield* hear("a", 1)
      yield* append(a!)
      yield* hear("b", 2)
      // A listener gets notifications in commit order: once both storages have heard a signal
      // sent after the last one, any echo of their own would have arrived before it.
      yield* Effect.promise(() => client.query("SELECT pg_notify('slotwise_signals_signals', 'domains')"))
      yield* Effect.promise(() => waitFor(() => sentinels.a === 1 && sentinels.b === 1, 10_000, "both storages to hear the closing signal"))
      yield* Effect.promise(() => client.end())
      expect(heard).toEqual({ a: 1, b: 2 })
    }).pipe(Effect.scoped), 60_000)
})
