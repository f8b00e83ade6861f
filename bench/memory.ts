/**
 * The in-memory storage (the sandbox tests run on) as its tables grow, printed (not asserted).
 * Run: `npx tsx bench/memory.ts` (`BENCH_BOOKINGS`, default 16,000).
 *
 * Creates through the Promise facade for four staff members, timed in blocks of 1,000 as
 * the bookings grow, each block followed by a page of 20 of one member's bookings and a day
 * of slots. The figures are the last block's costs against the block at a quarter of the
 * run (the first blocks warm the JIT), in the same run: near 1× when what a request reads does
 * not grow with the table, 4× when it reads every row.
 */
import { createScheduling } from "../index.js"
import { DAY, iso, slotStart, team } from "./fixtures.js"
import { median } from "./rounds.js"

const TOTAL = Number(process.env.BENCH_BOOKINGS ?? 16_000)
const BLOCK = 1_000
const STAFF = 4
/** Weekdays within the service's 400-day horizon: 20 half hours each, per member. */
const DAYS = 380

const s = await createScheduling({ storage: "memory" })
const { clientId, serviceId, staffIds } = await team(s, STAFF)
const micros = async (f: () => Promise<unknown>) => {
  const t0 = process.hrtime.bigint()
  await f()
  return Number(process.hrtime.bigint() - t0) / 1_000
}
const day = iso(slotStart(0, 1, DAYS) + 3 * DAY).slice(0, 10)

console.log(`in-memory storage, ${STAFF} staff members, blocks of ${BLOCK} creates; node ${process.version}\n`)
console.log("bookings   create µs   page of 20 µs   day of slots µs")
let reference: ReadonlyArray<number> | undefined
let last: ReadonlyArray<number> = []
for (let made = 0; made < TOTAL;) {
  const creates: Array<number> = []
  for (const end = made + BLOCK; made < end; made++) {
    const start = iso(slotStart(made, STAFF, DAYS))
    creates.push(
      await micros(() => s.bookings.create({ service_id: serviceId, staff_id: staffIds[made % STAFF]!, client_id: clientId, start }))
    )
  }
  const pages: Array<number> = []
  const slots: Array<number> = []
  for (let i = 0; i < 20; i++) {
    pages.push(await micros(() => s.bookings.list({ staff_id: staffIds[0]!, limit: 20 })))
    slots.push(await micros(() => s.availability.slots({ service_id: serviceId, start: `${day}T00:00:00Z`, end: `${day}T23:59:59Z` })))
  }
  last = [median(creates), median(pages), median(slots)]
  if (reference === undefined && made >= TOTAL / 4) reference = last
  console.log(`${String(made).padStart(8)}   ${last.map((x, i) => x.toFixed(0).padStart([9, 13, 15][i]!)).join("   ")}`)
}
await s.close()
const ratios = last.map((x, i) => `${(x / reference![i]!).toFixed(2)}×`)
console.log(`\nat ${TOTAL} bookings against ${TOTAL / 4}: a create ${ratios[0]}, a page of 20 ${ratios[1]}, a day of slots ${ratios[2]}`)
