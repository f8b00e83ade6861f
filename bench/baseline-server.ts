/**
 * The baseline of bench/http.ts: a minimal node:http + better-sqlite3 server doing the same
 * work as Slotwise for the benchmarked calls (bearer lookup by SHA-256, a per-key counter,
 * JSON documents in SQLite, an overlap check, the insert and an event insert in one BEGIN
 * IMMEDIATE transaction,
 * 30-minute slots of a week minus bookings) with none of the rest.
 * Run: node --import tsx bench/baseline-server.ts <db file>; prints "listening on URL".
 */
import Database from "better-sqlite3"
import { createHash, randomUUID } from "node:crypto"
import * as http from "node:http"

const db = new Database(process.argv[2] ?? ":memory:")
db.pragma("journal_mode = WAL")
db.pragma("synchronous = NORMAL")
db.exec(`CREATE TABLE IF NOT EXISTS keys (hash TEXT PRIMARY KEY, account TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS bookings (id TEXT PRIMARY KEY, account TEXT NOT NULL, staff_id TEXT NOT NULL, status TEXT NOT NULL,
  start_ms INTEGER NOT NULL, end_ms INTEGER NOT NULL, doc TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS ix_b ON bookings (account, staff_id, start_ms);
CREATE INDEX IF NOT EXISTS ix_s ON bookings (account, status, start_ms);
CREATE TABLE IF NOT EXISTS events (seq INTEGER PRIMARY KEY, account TEXT NOT NULL, type TEXT NOT NULL, doc TEXT NOT NULL);`)

const keyOf = db.prepare("SELECT account FROM keys WHERE hash = ?")
const getBooking = db.prepare("SELECT doc FROM bookings WHERE account = ? AND id = ?")
const listBookings = db.prepare("SELECT doc FROM bookings WHERE account = ? AND status = ? AND start_ms > ? ORDER BY start_ms, id LIMIT ?")
// Every booking here is 30 minutes long, so one that overlaps [start, end) starts after
// start - 30 min: the bound keeps the index scan short however many bookings there are.
const overlapping = db.prepare(
  "SELECT 1 FROM bookings WHERE account = ? AND staff_id = ? AND status IN ('pending','confirmed') AND start_ms < ? AND start_ms > ? AND end_ms > ? LIMIT 1"
)
const inRange = db.prepare(
  "SELECT start_ms, end_ms FROM bookings WHERE account = ? AND staff_id = ? AND status IN ('pending','confirmed') AND start_ms < ? AND end_ms > ?"
)
const insertEvent = db.prepare("INSERT INTO events (account, type, doc) VALUES (?, 'booking.created', ?)")
const insert = db.prepare("INSERT INTO bookings (id, account, staff_id, status, start_ms, end_ms, doc) VALUES (?, ?, ?, ?, ?, ?, ?)")
const begin = db.prepare("BEGIN IMMEDIATE")
const commit = db.prepare("COMMIT")
const rollback = db.prepare("ROLLBACK")

const counters = new Map<string, { count: number; reset: number }>()
const MINUTE = 60_000
const send = (res: http.ServerResponse, status: number, body: unknown) => {
  const text = JSON.stringify(body)
  res.writeHead(status, {
    "content-type": status >= 400 ? "application/problem+json" : "application/json",
    "content-length": Buffer.byteLength(text)
  })
  res.end(text)
}

const server = http.createServer((req, res) => {
  const chunks: Array<Buffer> = []
  req.on("data", (c: Buffer) => chunks.push(c))
  req.on("end", () => {
    const auth = req.headers.authorization?.slice(7) ?? ""
    const row = keyOf.get(createHash("sha256").update(auth).digest("hex")) as { account: string } | undefined
    if (row === undefined) return send(res, 401, { code: "unauthorized" })
    const now = Date.now()
    let c = counters.get(auth)
    if (c === undefined || now >= c.reset) counters.set(auth, c = { count: 0, reset: now + MINUTE })
    c.count++
    res.setHeader("x-ratelimit-remaining", String(Math.max(0, 1_000_000 - c.count)))
    const url = new URL(req.url!, "http://x")
    const account = row.account
    const parts = url.pathname.split("/")
    if (req.method === "GET" && parts[2] === "bookings" && parts[3]) {
      const doc = getBooking.get(account, parts[3]) as { doc: string } | undefined
      return doc ? send(res, 200, JSON.parse(doc.doc)) : send(res, 404, { code: "not_found" })
    }
    if (req.method === "GET" && url.pathname === "/v1/bookings") {
      const limit = Number(url.searchParams.get("limit") ?? 20)
      const rows = listBookings.all(account, url.searchParams.get("status") ?? "confirmed", 0, limit + 1) as Array<{ doc: string }>
      const data = rows.slice(0, limit).map((r) => JSON.parse(r.doc))
      return send(res, 200, {
        object: "list",
        data,
        has_more: rows.length > limit,
        next_cursor: rows.length > limit ? String(data[data.length - 1].start) : null
      })
    }
    if (req.method === "POST" && url.pathname === "/v1/bookings") {
      const body = JSON.parse(Buffer.concat(chunks).toString("utf8"))
      const start = Date.parse(body.start)
      const end = start + 30 * MINUTE
      begin.run()
      try {
        if (overlapping.get(account, body.staff_id, end, start - 30 * MINUTE, start) !== undefined) {
          rollback.run()
          return send(res, 409, { code: "slot_unavailable" })
        }
        const doc = {
          id: `bkg_${randomUUID()}`,
          object: "booking",
          ...body,
          end: new Date(end).toISOString(),
          status: "confirmed",
          created_at: new Date().toISOString()
        }
        const text = JSON.stringify(doc)
        insert.run(doc.id, account, body.staff_id, "confirmed", start, end, text)
        insertEvent.run(account, text)
        commit.run()
        return send(res, 201, doc)
      } catch (e) {
        rollback.run()
        throw e
      }
    }
    if (req.method === "GET" && url.pathname === "/v1/availability/slots") {
      const from = Date.parse(url.searchParams.get("start")!)
      const to = Date.parse(url.searchParams.get("end")!)
      const staff = url.searchParams.get("staff_id")!
      const busy = inRange.all(account, staff, to, from) as Array<{ start_ms: number; end_ms: number }>
      const data = []
      for (let t = Math.max(from, Math.ceil(now / (30 * MINUTE)) * 30 * MINUTE); t + 30 * MINUTE <= to; t += 30 * MINUTE) {
        if (busy.some((b) => b.start_ms < t + 30 * MINUTE && b.end_ms > t)) continue
        data.push({ start: new Date(t).toISOString(), end: new Date(t + 30 * MINUTE).toISOString(), staff_id: staff, remaining: 1 })
      }
      return send(res, 200, { object: "list", data })
    }
    send(res, 404, { code: "not_found" })
  })
})

/** Seeding hook for the bench: a key and bookings, as the bench creates them in Slotwise. */
export const seedBaseline = (secret: string, account: string) =>
  db.prepare("INSERT OR IGNORE INTO keys (hash, account) VALUES (?, ?)").run(createHash("sha256").update(secret).digest("hex"), account)

if (process.argv[3] !== undefined) seedBaseline(process.argv[3], "acc_bench")
server.keepAliveTimeout = 5000
server.listen(0, "127.0.0.1", () => {
  console.log(`listening on http://127.0.0.1:${(server.address() as { port: number }).port}`)
})
process.on("SIGTERM", () => server.close(() => process.exit(0)))
