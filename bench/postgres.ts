/**
 * PostgreSQL figures, printed (never asserted). Run: `npx tsx bench/postgres.ts`
 * (`SLOTWISE_BENCH_POSTGRES_URL`, default the local server; a database of its own is
 * created and dropped). The core runs from source on `PostgresStorageLive`.
 *
 * 1. Booking creations per second through the Promise facade (every check, the event and the
 *    transaction included) next to a raw `pg` baseline in the same process: one
 *    BEGIN / INSERT booking row / COMMIT per booking, on one connection. Interleaved rounds,
 *    medians (see rounds.ts).
 * 2. `availability.slots` for 50 staff × 31 days with 5,000 bookings (and 1 staff), median,
 *    next to the same case on a SQLite file in the same rounds (the machine's load hits both),
 *    and on a second PostgreSQL client that reads the schedules in one statement instead of
 *    one per connection at once (what spreading them over connections gains). The tables are
 *    analysed first, as autovacuum would have them.
 * 3. `bookings.list` (the GET list use case, default page) at 1k and 1M bookings, first page
 *    and a page deep in the keyset, the bookings seeded with generate_series in SQL; and a
 *    page by staff member, status, service, client and of past bookings, each matching 21
 *    bookings (or none) beside the seeded ones.
 * 0. The driver: one primary-key SELECT (named and prepared on `pg`) alone and eight of them in a transaction, on
 *    `pg` and on `@effect/sql-pg`, interleaved (why the adapter calls `pg` directly).
 * 5. Concurrent creates for different staff members, two cores (two pools, as two processes
 *    would be) with 20 in flight: under the member locks the adapter takes, and under one
 *    lock per account (the same storage without `keyedTransaction`), interleaved rounds.
 * 4. The write lock's alternatives, on raw `pg`: 200 concurrent check-then-insert
 *    transactions for one seat from two pools of 10, under the per-tenant advisory lock the
 *    adapter takes, and under SERIALIZABLE with retries on serialization failures.
 */
import { PgClient } from "@effect/sql-pg"
import { Context, Effect, Layer, ManagedRuntime, Redacted } from "effect"
import { randomBytes } from "node:crypto"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import pg from "pg"
import { createScheduling } from "../index.js"
import { PostgresStorageLive } from "../adapters/postgres/layer.js"
import { DEFAULT_TENANT, makeFacade, type SchedulingClient, startCore } from "../library.js"
import { CoreLive } from "../src/layers.js"
import { Storage, type StorageService } from "../src/ports/storage.js"
import { WebhookPolicy } from "../src/webhooks/policy.js"
import { HALF_HOUR, iso, seedSlotsCase, slotStart, team } from "./fixtures.js"
import { interleaved, median } from "./rounds.js"

const SERVER = process.env.SLOTWISE_BENCH_POSTGRES_URL ?? "postgres://postgres@127.0.0.1:5432/postgres"
const DB = `slotwise_bench_${randomBytes(4).toString("hex")}`
/** Sections to run (default all): `driver`, `creates`, `slots`, `lists`, `locks`, `members`. */
const only = new Set(process.argv.slice(2))
const runs = (section: string) => only.size === 0 || only.has(section)
/** A raw client that survives a server-side disconnect as an error, not a crash. */
const client = (config: string | pg.ClientConfig) => {
  const c = new pg.Client(config)
  c.on("error", (error) => console.error(`connection lost: ${error.message}`))
  return c
}
const admin = client(SERVER)
await admin.connect()
await admin.query(`CREATE DATABASE ${DB}`)
const url = (() => {
  const u = new URL(SERVER)
  u.pathname = `/${DB}`
  return u.toString()
})()

/**
 * The core on PostgreSQL; `sequentialReads` has it read as inside a transaction (the
 * schedules' reads in one statement, not one per connection at once); `accountLock` has every write take the account's lock, as
 * before bookings locked their members.
 */
const scheduling = async (schema: string, sequentialReads = false, accountLock = false): Promise<SchedulingClient> => {
  const storage = PostgresStorageLive({ url, schema })
  const changed = (service: StorageService): StorageService => {
    const { keyedTransaction: _keyed, lockKeys: _locks, ...plain } = service
    return { ...(accountLock ? plain : service), ...(sequentialReads ? { readConcurrency: Effect.succeed(1) } : {}) }
  }
  const runtime = ManagedRuntime.make(
    CoreLive.pipe(
      Layer.provide(Layer.succeed(WebhookPolicy, { allowPrivate: false })),
      Layer.provide(
        sequentialReads || accountLock
          ? Layer.map(storage, (context) => Context.add(context, Storage, changed(Context.get(context, Storage))))
          : storage
      )
    )
  )
  return makeFacade(await startCore(runtime), DEFAULT_TENANT)
}

// 0. Driver.
const driver = async (rounds: number, n: number) => {
  const raw = client(url)
  await raw.connect()
  await raw.query("CREATE TABLE floor (a text, id text, doc json, PRIMARY KEY (a, id)); INSERT INTO floor VALUES ('a', 'x', '{\"x\": 1}')")
  const text = "SELECT doc FROM floor WHERE a = $1 AND id = $2"
  const effect = ManagedRuntime.make(PgClient.layer({ url: Redacted.make(url), maxConnections: 1 }))
  const sql = await effect.runPromise(PgClient.PgClient)
  const rawStatements = async () => {
    for (let i = 0; i < n; i++) await raw.query({ name: "floor", text, values: ["a", "x"] })
  }
  const rawTransactions = async () => {
    for (let i = 0; i < n / 8; i++) {
      await raw.query("BEGIN")
      for (let k = 0; k < 8; k++) await raw.query({ name: "floor", text, values: ["a", "x"] })
      await raw.query("COMMIT")
    }
  }
  const effectStatements = () => effect.runPromise(Effect.repeatN(sql.unsafe(text, ["a", "x"]), n - 1))
  const effectTransactions = () =>
    effect.runPromise(Effect.repeatN(sql.withTransaction(Effect.repeatN(sql.unsafe(text, ["a", "x"]), 7)), n / 8 - 1))
  const times = await interleaved([rawStatements, effectStatements, rawTransactions, effectTransactions], rounds)
  await effect.dispose()
  await raw.end()
  const [a, b, c, d] = times.map((t) => median(t) * 1000)
  return { rawStatement: a! / n, effectStatement: b! / n, rawTransaction: c! / (n / 8), effectTransaction: d! / (n / 8) }
}

// 1. Creations.
const creates = async (rounds: number, perRound: number) => {
  const s = await scheduling("creates")
  const { clientId, serviceId, staffIds } = await team(s, 10)
  let i = 0
  const slotwise = async () => {
    for (const end = i + perRound; i < end; i++) {
      await s.bookings.create({
        service_id: serviceId,
        staff_id: staffIds[i % 10]!,
        client_id: clientId,
        start: iso(slotStart(i, 10, 200))
      })
    }
  }
  const raw = client(url)
  await raw.connect()
  await raw.query(`CREATE TABLE raw_bookings (account_id text, environment text, id text, staff_id text, service_id text,
    client_id text, status text, start_ms bigint, end_ms bigint, doc json, PRIMARY KEY (account_id, environment, id))`)
  let j = 0
  const insert = async () => {
    for (const end = j + perRound; j < end; j++) {
      const start = slotStart(j, 10, 200)
      const doc = {
        id: `bkg_${j}`,
        object: "booking",
        staff_id: `stf_${j % 10}`,
        start: iso(start),
        end: iso(start + HALF_HOUR),
        status: "confirmed"
      }
      await raw.query("BEGIN")
      await raw.query({
        name: "ins",
        text: "INSERT INTO raw_bookings VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)",
        values: ["acc", "sandbox", doc.id, doc.staff_id, "svc", "cli", "confirmed", start, start + HALF_HOUR, JSON.stringify(doc)]
      })
      await raw.query("COMMIT")
    }
  }
  await slotwise()
  await insert()
  const [a, b] = await interleaved([slotwise, insert], rounds)
  const rate = (ms: number) => perRound / (ms / 1000)
  const ratios = a!.map((ms, k) => rate(ms) / rate(b![k]!))
  await raw.end()
  await s.close()
  return {
    slotwise: median(a!.map(rate)),
    insert: median(b!.map(rate)),
    ratio: median(ratios),
    range: [Math.min(...ratios), Math.max(...ratios)]
  }
}

// 2. Slots, on PostgreSQL and, for scale on the same machine at the same moment, on SQLite.
const prepareSlots = (s: SchedulingClient, staff: number, bookings: number) => seedSlotsCase(s, { staff, days: 31, bookings })
const timed = async (s: SchedulingClient, query: Parameters<SchedulingClient["availability"]["slots"]>[0]) => {
  for (let k = 0; k < 4; k++) await s.availability.slots(query)
  return { count: (await s.availability.slots(query)).data.length, run: () => s.availability.slots(query) }
}
const slots = async (staff: number, bookings: number, rounds: number) => {
  const schema = `slots_${staff}_${bookings}`
  const onPostgres = await scheduling(schema)
  const dir = mkdtempSync(join(tmpdir(), "slotwise-bench-pg-"))
  const onSqlite = await createScheduling({ storage: { sqlite: join(dir, "slots.db") } })
  const pgQuery = await prepareSlots(onPostgres, staff, bookings)
  // Statistics, as autovacuum keeps them on a server that runs it (this one may not).
  const stats = client({ connectionString: url, options: `-c search_path=${schema}` })
  await stats.connect()
  await stats.query("ANALYZE")
  await stats.end()
  // The same rows read by a second client whose schedule reads go in one statement.
  const onPostgresSequential = await scheduling(schema, true)
  const pgCase = await timed(onPostgres, pgQuery)
  const pgSequentialCase = await timed(onPostgresSequential, pgQuery)
  const sqliteCase = await timed(onSqlite, await prepareSlots(onSqlite, staff, bookings))
  const [pgTimes, pgSequentialTimes, sqliteTimes] = await interleaved([pgCase.run, pgSequentialCase.run, sqliteCase.run], rounds)
  await onPostgres.close()
  await onPostgresSequential.close()
  await onSqlite.close()
  rmSync(dir, { recursive: true, force: true })
  const ratios = (times: ReadonlyArray<number>) => median(times.map((ms, k) => ms / sqliteTimes![k]!))
  return {
    postgres: median(pgTimes!),
    sequential: median(pgSequentialTimes!),
    sqlite: median(sqliteTimes!),
    ratio: ratios(pgTimes!),
    sequentialRatio: ratios(pgSequentialTimes!),
    count: pgCase.count
  }
}

// 3. Lists.
const lists = async (bookings: number, rounds: number) => {
  const schema = `list_${bookings}`
  const s = await scheduling(schema)
  const { clientId, serviceId, staffIds } = await team(s, 10)
  await s.bookings.create({ service_id: serviceId, staff_id: staffIds[0]!, client_id: clientId, start: iso(slotStart(0, 10, 31)) })
  const seed = client({ connectionString: url, options: `-c search_path=${schema}` })
  await seed.connect()
  // A real booking's document as the template; ids, staff and times vary by row.
  await seed.query(
    `INSERT INTO c_bookings (account_id, environment, id, staff_id, service_id, client_id, status, start_ms,
      end_ms, occupied_start, occupied_end, doc)
    SELECT b.account_id, b.environment, 'bkg_seed' || lpad(g::text, 18, '0'), b.staff_id, b.service_id, b.client_id, b.status,
      b.start_ms + g * 60000, b.end_ms + g * 60000, b.occupied_start + g * 60000, b.occupied_end + g * 60000,
      (b.doc::jsonb || jsonb_build_object('id', 'bkg_seed' || lpad(g::text, 18, '0'),
        'start', to_char(to_timestamp((b.start_ms + g * 60000) / 1000.0) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'),
        'end', to_char(to_timestamp((b.end_ms + g * 60000) / 1000.0) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"')))::json
    FROM c_bookings b, generate_series(1::bigint, $1::bigint - 1) g`,
    [bookings]
  )
  await seed.query("VACUUM ANALYZE c_bookings")
  const deep = await seed.query(
    "SELECT start_ms, id FROM c_bookings ORDER BY start_ms, id OFFSET $1 LIMIT 1",
    [Math.floor(bookings * 0.9)]
  )
  await seed.end()
  const first = await s.bookings.list({})
  const cursor = JSON.parse(Buffer.from(first.next_cursor!, "base64url").toString())
  const deepCursor = Buffer.from(JSON.stringify({ ...cursor, k: [Number(deep.rows[0].start_ms), deep.rows[0].id] })).toString("base64url")
  const deepPage = () => s.bookings.list({ cursor: deepCursor })
  if ((await deepPage()).data[0] === undefined) throw new Error("the deep page is empty")
  // Pages by one filter that the seeded bookings do not match (21 pending bookings of another
  // staff member, service and client, made after the seeding, as a few new bookings are
  // beside many older ones): each must read its own index in start order, not walk the
  // seeded ones. Past bookings (`upcoming: false`): none, every booking lies ahead.
  const asked = await s.services.create({
    name: "Consultation",
    duration_minutes: 30,
    staff_ids: [staffIds[1]!],
    max_advance_days: 400,
    requires_confirmation: true
  })
  const other = await s.clients.create({ name: "Other client" })
  for (let i = 0; i < 21; i++) {
    await s.bookings.create({
      service_id: asked.id,
      staff_id: staffIds[1]!,
      client_id: other.id,
      start: iso(slotStart(i * 10 + 1, 10, 31))
    })
  }
  const filters = {
    "staff member": { staff_id: staffIds[1]! },
    "status pending": { status: "pending" as const },
    "service": { service_id: asked.id },
    "client": { client_id: other.id },
    "past (none)": { upcoming: false }
  }
  const filtered = Object.values(filters).map((filter) => () => s.bookings.list(filter))
  for (let k = 0; k < 20; k++) await Promise.all([s.bookings.list({}), deepPage(), ...filtered.map((page) => page())])
  const [firstTimes, deepTimes, ...filteredTimes] = await interleaved([() => s.bookings.list({}), deepPage, ...filtered], rounds)
  await s.close()
  return {
    first: median(firstTimes!),
    deep: median(deepTimes!),
    size: first.data.length,
    filtered: Object.keys(filters).map((name, i) => ({ name, ms: median(filteredTimes[i]!) }))
  }
}

// 5. Concurrent creates for different members.
const members = async (rounds: number, perRound: number) => {
  const contestant = async (schema: string, accountLock: boolean) => {
    const cores = [await scheduling(schema, false, accountLock), await scheduling(schema, false, accountLock)]
    const { clientId, serviceId, staffIds } = await team(cores[0]!, 10)
    let i = 0
    const run = async () => {
      const next = async (core: SchedulingClient): Promise<void> => {
        if (i >= end) return
        const k = i++
        await core.bookings.create({
          service_id: serviceId,
          staff_id: staffIds[k % 10]!,
          client_id: clientId,
          start: iso(slotStart(k, 10, 200))
        })
        return next(core)
      }
      const end = i + perRound
      await Promise.all(Array.from({ length: 20 }, (_, w) => next(cores[w % 2]!)))
    }
    return { run, close: () => Promise.all(cores.map((c) => c.close())) }
  }
  const keyed = await contestant("members_keyed", false)
  const whole = await contestant("members_account", true)
  await keyed.run()
  await whole.run()
  const [a, b] = await interleaved([keyed.run, whole.run], rounds)
  await Promise.all([keyed.close(), whole.close()])
  const rate = (ms: number) => perRound / (ms / 1000)
  const ratios = a!.map((ms, k) => rate(ms) / rate(b![k]!))
  return {
    keyed: median(a!.map(rate)),
    whole: median(b!.map(rate)),
    ratio: median(ratios),
    range: [Math.min(...ratios), Math.max(...ratios)]
  }
}

// 4. Locks.
const contention = async (mode: "advisory" | "serializable", claims: number) => {
  const setup = client(url)
  await setup.connect()
  await setup.query(`DROP TABLE IF EXISTS seats; CREATE TABLE seats (account_id text, id text, slot bigint, PRIMARY KEY (account_id, id));
    CREATE INDEX ON seats (account_id, slot)`)
  await setup.end()
  const pools = [0, 1].map(() => {
    const pool = new pg.Pool({ connectionString: url, max: 10 })
    pool.on("error", (error) => console.error(`connection lost: ${error.message}`))
    return pool
  })
  await Promise.all(pools.flatMap((p) => Array.from({ length: 10 }, () => p.query("SELECT 1"))))
  let retries = 0
  const claim = async (pool: pg.Pool, i: number): Promise<boolean> => {
    const c = await pool.connect()
    try {
      for (;;) {
        try {
          await c.query(
            mode === "advisory"
              ? "BEGIN; SELECT pg_advisory_xact_lock(hashtextextended('acct/sandbox', 0))"
              : "BEGIN ISOLATION LEVEL SERIALIZABLE"
          )
          const taken = await c.query({
            name: "check",
            text: "SELECT id FROM seats WHERE account_id = $1 AND slot = $2",
            values: ["acct", 1]
          })
          if (taken.rows.length === 0)
            await c.query({ name: "claim", text: "INSERT INTO seats VALUES ($1, $2, $3)", values: ["acct", `s${i}`, 1] })
          await c.query("COMMIT")
          return taken.rows.length === 0
        } catch (error) {
          await c.query("ROLLBACK")
          if ((error as { code?: string }).code !== "40001") throw error
          retries++
        }
      }
    } finally {
      c.release()
    }
  }
  const t0 = performance.now()
  const won = await Promise.all(Array.from({ length: claims }, (_, i) => claim(pools[i % 2]!, i)))
  const ms = performance.now() - t0
  await Promise.all(pools.map((p) => p.end()))
  return { ms, winners: won.filter(Boolean).length, retries }
}

try {
  console.log(`Slotwise on PostgreSQL (${(await admin.query("SHOW server_version")).rows[0].server_version}; core from source)\n`)
  if (runs("driver")) {
    const d = await driver(7, 800)
    console.log("Driver, one connection (7 interleaved rounds, medians):")
    console.log(
      `  pg             ${d.rawStatement.toFixed(0).padStart(5)} µs per SELECT   ${
        d.rawTransaction.toFixed(0).padStart(6)
      } µs per BEGIN + 8 SELECTs + COMMIT`
    )
    console.log(
      `  @effect/sql-pg ${d.effectStatement.toFixed(0).padStart(5)} µs per SELECT   ${
        d.effectTransaction.toFixed(0).padStart(6)
      } µs per BEGIN + 8 SELECTs + COMMIT\n`
    )
  }
  if (runs("creates")) {
    const c = await creates(15, 100)
    console.log("Booking creation, sequential, one transaction each (15 interleaved rounds of 100, medians):")
    console.log(`  slotwise bookings.create   ${c.slotwise.toFixed(0).padStart(7)} /s`)
    console.log(`  raw pg BEGIN/INSERT/COMMIT ${c.insert.toFixed(0).padStart(7)} /s`)
    console.log(
      `  ratio                      ${c.ratio.toFixed(3).padStart(7)}×  (target ≥ 0.2×; rounds ${c.range[0]!.toFixed(3)}–${
        c.range[1]!.toFixed(3)
      })\n`
    )
  }
  if (runs("slots")) {
    const one = await slots(1, 0, 30)
    const fifty = await slots(50, 5000, 30)
    console.log("availability.slots end to end, interleaved (30 rounds, medians; ratios are medians of each round's own):")
    console.log("  PostgreSQL with reads on several connections at once, PostgreSQL with the reads in one statement, SQLite")
    for (const [label, c] of [["1 staff × 31 days", one], ["50 staff × 31 days, 5,000 bookings", fifty]] as const) {
      console.log(
        `  ${label.padEnd(36)} ${String(c.count).padStart(6)} slots  together ${c.postgres.toFixed(2).padStart(6)} ms (${
          c.ratio.toFixed(2)
        }× sqlite)` +
          `  in one ${c.sequential.toFixed(2).padStart(6)} ms (${c.sequentialRatio.toFixed(2)}×)  sqlite ${
            c.sqlite.toFixed(2).padStart(6)
          } ms`
      )
    }
    console.log("  target: 50 × 31 with 5,000 bookings under 30 ms on PostgreSQL\n")
  }
  if (runs("lists")) {
    const small = await lists(1000, 40)
    const large = await lists(1_000_000, 40)
    console.log(`bookings.list, default page of ${small.size} (40 interleaved rounds, medians):`)
    console.log(`  1k bookings   first page ${small.first.toFixed(2).padStart(6)} ms   deep page ${small.deep.toFixed(2).padStart(6)} ms`)
    console.log(`  1M bookings   first page ${large.first.toFixed(2).padStart(6)} ms   deep page ${large.deep.toFixed(2).padStart(6)} ms`)
    console.log(
      `  1M / 1k       first page ${(large.first / small.first).toFixed(2).padStart(6)}×    deep page ${
        (large.deep / small.deep).toFixed(2).padStart(6)
      }×  (target ≤ 1.3×)`
    )
    console.log("  a page by one filter matching 21 bookings (or none) beside the seeded ones:")
    large.filtered.forEach(({ ms, name }, i) =>
      console.log(
        `    ${name.padEnd(15)} 1k ${small.filtered[i]!.ms.toFixed(2).padStart(6)} ms   1M ${ms.toFixed(2).padStart(6)} ms   ${
          (ms / small.filtered[i]!.ms).toFixed(2)
        }×`
      )
    )
  }
  if (runs("locks")) {
    console.log("\n200 concurrent check-then-insert claims for one seat, two pools of 10 (median of 5):")
    for (const mode of ["advisory", "serializable"] as const) {
      const runs5 = []
      for (let k = 0; k < 5; k++) runs5.push(await contention(mode, 200))
      const ms = median(runs5.map((r) => r.ms))
      console.log(
        `  ${mode.padEnd(13)} ${ms.toFixed(0).padStart(6)} ms   winners ${runs5.map((r) => r.winners).join("/")}   retries ${
          runs5.map((r) => r.retries).join("/")
        }`
      )
    }
  }
  if (runs("members")) {
    const m = await members(9, 200)
    console.log("\nConcurrent creates, 10 members, 20 in flight from two cores (9 interleaved rounds of 200, medians):")
    console.log(`  member locks         ${m.keyed.toFixed(0).padStart(7)} /s`)
    console.log(`  one lock per account ${m.whole.toFixed(0).padStart(7)} /s`)
    console.log(`  ratio                ${m.ratio.toFixed(2).padStart(7)}×  (rounds ${m.range[0]!.toFixed(2)}–${m.range[1]!.toFixed(2)})`)
  }
} finally {
  await admin.query(`DROP DATABASE IF EXISTS ${DB} WITH (FORCE)`)
  await admin.end()
}
