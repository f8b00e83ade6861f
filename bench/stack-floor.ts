/**
 * The storage stack's floor for a booking creation, printed (not asserted). Run:
 * `npx tsx bench/stack-floor.ts`. The statements one `bookings.create` issues (four lookups,
 * the booking and hold overlap queries, the booking insert and its outbox event, in one
 * BEGIN IMMEDIATE) are run three ways on identical schemas: as one bare insert per
 * transaction (the creation benchmark's baseline), through raw better-sqlite3, and through
 * `@effect/sql-sqlite-node` with no Slotwise code at all. The last figure bounds what any
 * core on that client can reach.
 */
import Database from "better-sqlite3"
import { SqliteClient } from "@effect/sql-sqlite-node"
import { Effect, ManagedRuntime } from "effect"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
const dir = mkdtempSync(join(tmpdir(), "slotwise-floor-"))
const DDL = [
  "CREATE TABLE c (a TEXT, e TEXT, id TEXT, doc TEXT, PRIMARY KEY(a,e,id))",
  "CREATE TABLE b (a TEXT, e TEXT, id TEXT, staff_id TEXT, service_id TEXT, client_id TEXT, status TEXT, start_ms INT, end_ms INT, os INT, oe INT, doc TEXT, PRIMARY KEY(a,e,id))",
  "CREATE INDEX b1 ON b(a,e,staff_id,oe,os,status,start_ms,end_ms,service_id,id)",
  "CREATE INDEX b2 ON b(a,e,start_ms,id)",
  "CREATE INDEX b3 ON b(a,e,service_id,start_ms,id)",
  "CREATE INDEX b4 ON b(a,e,client_id,start_ms,id)",
  "CREATE TABLE h (a TEXT, e TEXT, id TEXT, staff_id TEXT, os INT, oe INT, exp INT, doc TEXT, PRIMARY KEY(a,e,id))",
  "CREATE TABLE ev (seq INTEGER PRIMARY KEY AUTOINCREMENT, a TEXT, e TEXT, id TEXT UNIQUE, type TEXT, doc TEXT)",
  "CREATE INDEX ev1 ON ev(a,e,seq)"
]
const doc = JSON.stringify({ x: "y".repeat(550) })
const N = 4000
const raw = () => {
  const d = new Database(join(dir, "raw.db"))
  d.pragma("journal_mode = WAL")
  d.pragma("synchronous = NORMAL")
  for (const s of DDL) d.exec(s)
  d.prepare("INSERT INTO c VALUES ('a','s','x',?)").run(doc)
  const get = d.prepare("SELECT doc FROM c WHERE a=? AND e=? AND id=?"),
    ov = d.prepare(
      "SELECT id, staff_id, service_id, start_ms, end_ms, os, oe FROM b WHERE a=? AND e=? AND staff_id IN (?) AND os < ? AND oe > ? AND status IN ('pending','confirmed')"
    ).raw(true)
  const hv = d.prepare("SELECT id FROM h WHERE a=? AND e=? AND staff_id IN (?) AND os < ? AND oe > ? AND exp > ?").raw(true)
  const ins = d.prepare("INSERT INTO b VALUES (?,?,?,?,?,?,?,?,?,?,?,?)"),
    ev = d.prepare("INSERT INTO ev (a,e,id,type,doc) VALUES (?,?,?,?,?)"),
    B = d.prepare("BEGIN IMMEDIATE"),
    C = d.prepare("COMMIT")
  const t0 = performance.now()
  for (let i = 0; i < N; i++) {
    B.run()
    for (let k = 0; k < 4; k++) JSON.parse((get.get("a", "s", "x") as { doc: string }).doc)
    ov.all("a", "s", "st" + (i % 10), i * 2 + 1, i * 2)
    hv.all("a", "s", "st" + (i % 10), i * 2 + 1, i * 2, 0)
    ins.run("a", "s", "b" + i, "st" + (i % 10), "sv", "cl", "confirmed", i * 2, i * 2 + 1, i * 2, i * 2 + 1, doc)
    ev.run("a", "s", "e" + i, "booking.created", doc)
    C.run()
  }
  return N / ((performance.now() - t0) / 1000)
}
const single = () => {
  const d = new Database(join(dir, "single.db"))
  d.pragma("journal_mode = WAL")
  d.pragma("synchronous = NORMAL")
  d.exec(
    "CREATE TABLE b (a TEXT, e TEXT, id TEXT, staff_id TEXT, service_id TEXT, client_id TEXT, status TEXT, start_ms INT, end_ms INT, os INT, oe INT, doc TEXT, PRIMARY KEY(a,e,id)) WITHOUT ROWID"
  )
  d.exec("CREATE INDEX s ON b(a,e,staff_id,id)")
  d.exec("CREATE INDEX t ON b(a,e,start_ms,id)")
  const ins = d.prepare("INSERT INTO b VALUES (?,?,?,?,?,?,?,?,?,?,?,?)"), B = d.prepare("BEGIN IMMEDIATE"), C = d.prepare("COMMIT")
  const t0 = performance.now()
  for (let i = 0; i < N; i++) {
    B.run()
    ins.run("a", "s", "b" + i, "st" + (i % 10), "sv", "cl", "confirmed", i * 2, i * 2 + 1, i * 2, i * 2 + 1, doc)
    C.run()
  }
  return N / ((performance.now() - t0) / 1000)
}
const viaEffect = async () => {
  const rt = ManagedRuntime.make(SqliteClient.layer({ filename: join(dir, "effect.db") }))
  const program = Effect.gen(function*() {
    const sql = yield* SqliteClient.SqliteClient
    for (const s of DDL) yield* sql.unsafe(s)
    yield* sql.unsafe("INSERT INTO c VALUES ('a','s','x',?)", [doc])
    const once = (i: number) =>
      sql.withTransaction(Effect.gen(function*() {
        for (let k = 0; k < 4; k++)
          yield* sql.unsafe("SELECT doc FROM c WHERE a=? AND e=? AND id=?", ["a", "s", "x"]).pipe(
            Effect.map((r: any) => JSON.parse(r[0].doc))
          )
        yield* sql.unsafe(
          "SELECT id, staff_id, service_id, start_ms, end_ms, os, oe FROM b WHERE a=? AND e=? AND staff_id IN (?) AND os < ? AND oe > ? AND status IN ('pending','confirmed')",
          ["a", "s", "st" + (i % 10), i * 2 + 1, i * 2]
        ).values
        yield* sql.unsafe("SELECT id FROM h WHERE a=? AND e=? AND staff_id IN (?) AND os < ? AND oe > ? AND exp > ?", [
          "a",
          "s",
          "st" + (i % 10),
          i * 2 + 1,
          i * 2,
          0
        ]).values
        yield* sql.unsafe("INSERT INTO b VALUES (?,?,?,?,?,?,?,?,?,?,?,?)", [
          "a",
          "s",
          "b" + i,
          "st" + (i % 10),
          "sv",
          "cl",
          "confirmed",
          i * 2,
          i * 2 + 1,
          i * 2,
          i * 2 + 1,
          doc
        ])
        yield* sql.unsafe("INSERT INTO ev (a,e,id,type,doc) VALUES (?,?,?,?,?)", ["a", "s", "e" + i, "booking.created", doc])
      }))
    const t0 = performance.now()
    for (let i = 0; i < N; i++) yield* once(i)
    return N / ((performance.now() - t0) / 1000)
  })
  const r = await rt.runPromise(program)
  await rt.dispose()
  return r
}
const s = single(), w = raw(), e = await viaEffect()
console.log(`one insert per txn (baseline)   ${s.toFixed(0)}/s`)
console.log(`create's statements, raw        ${w.toFixed(0)}/s  ${(w / s).toFixed(3)}x baseline`)
console.log(`create's statements, @effect/sql ${e.toFixed(0)}/s  ${(e / s).toFixed(3)}x baseline  (no Slotwise core at all)`)
rmSync(dir, { recursive: true, force: true })
