import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import { mkdirSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import type { Page } from "playwright-core"
import { expectStatus } from "../http/harness.js"
import { verifies, waitFor } from "../webhooks/receiver.js"
import { type Bench, events, startBench, violations } from "./fixture.js"

let bench: Bench
const shots = join(tmpdir(), `slotwise-widget-shots-${process.pid}`)

beforeAll(async () => {
  mkdirSync(shots, { recursive: true })
  bench = await startBench()
}, 60_000)
afterAll(async () => {
  await bench?.close()
})
// A fresh rate-limit window per test (the limiter counts on the server's controlled clock).
beforeEach(async () => {
  await bench.server.advance(61_000)
})

const widget = (attrs: Record<string, string>) =>
  `<div id="w" data-slotwise-widget ${Object.entries(attrs).map(([k, v]) => `data-${k}="${v}"`).join(" ")}></div>`

const heading = (page: Page) => page.locator("#w h2")

const readBack = async (page: Page) => {
  const id = await page.locator("#w [data-booking]").getAttribute("data-booking")
  const booking = expectStatus(await bench.admin.get(`/v1/bookings/${id}`), 200)
  const client = expectStatus(await bench.admin.get(`/v1/clients/${booking.client_id}`), 200)
  return { booking, client }
}

const delivered = async (bookingId: string) => {
  await waitFor(() => bench.receiver.received.some((r) => r.body.includes(bookingId)), 10_000, `webhook for ${bookingId}`)
  const request = bench.receiver.received.find((r) => r.body.includes(bookingId))!
  expect(verifies(bench.webhookSecret, request)).toBe(true)
  expect(JSON.parse(request.body)).toMatchObject({ type: "booking.created", data: { object: { id: bookingId } } })
}

describe("booking widget", () => {
  it("books with the mouse on a page with a strict CSP; events on the element and on window; webhook delivered", async () => {
    const context = await bench.context()
    const page = await bench.open(context, bench.host.page(widget({ key: bench.pk, service: bench.ids.cut })))
    await expect.poll(() => heading(page).textContent()).toBe("Choose who")
    await page.screenshot({ path: join(shots, "staff-light.png") })
    await page.locator(`#w button[data-staff="${bench.ids.ana}"]`).click()
    await expect.poll(() => heading(page).textContent()).toBe("Pick a date and time")
    await page.locator('#w button[data-day="2027-03-29"]').click()
    // 10:00 in Berlin (summer time from 28 March) is 08:00Z.
    const time = page.locator('#w button[data-start="2027-03-29T08:00:00Z"]')
    await expect.poll(() => time.textContent()).toBe("10:00 AM")
    await page.screenshot({ path: join(shots, "times-light.png") })
    await time.click()
    await expect.poll(() => heading(page).textContent()).toBe("Your details")
    await page.locator("#w #f-name").fill("Mia Maus")
    await page.locator("#w #f-email").fill("mia@example.com")
    await page.locator("#w #f-phone").fill("+49 30 1234567")
    await page.screenshot({ path: join(shots, "details-light.png") })
    await page.locator('#w button[type="submit"]').click()
    await expect.poll(() => heading(page).textContent()).toBe("Booking confirmed")
    await page.screenshot({ path: join(shots, "done-light.png") })

    const { booking, client } = await readBack(page)
    expect(booking).toMatchObject({ service_id: bench.ids.cut, staff_id: bench.ids.ana, start: "2027-03-29T08:00:00Z", status: "confirmed" })
    expect(client).toMatchObject({ name: "Mia Maus", email: "mia@example.com", phone: "+49 30 1234567", time_zone: "Europe/Berlin" })
    await delivered(booking.id)

    const seen = await events(page)
    for (const via of ["element", "window"] as const) {
      const mine = seen.filter((e) => e.via === via)
      expect(mine.map((e) => e.type)).toEqual(["slotwise:ready", "slotwise:slot_selected", "slotwise:booking_created"])
      expect(mine[1]!.payload).toMatchObject({ start: "2027-03-29T08:00:00Z", staff_id: bench.ids.ana })
      expect(mine[2]!.payload).toMatchObject({ id: booking.id, object: "booking", start: booking.start, client_id: booking.client_id })
    }
    expect(seen.filter((e) => e.via === "element").every((e) => e.target === "w" && e.bubbles && e.composed)).toBe(true)
    expect(await violations(page)).toEqual([])
    await context.close()
  })
})
