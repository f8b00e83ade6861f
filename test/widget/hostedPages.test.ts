/**
 * The hosted pages in real Chromium, under their own CSP: a client books on
 * `/book/{handle}/sandbox/{service}` answering the service's questions, opens the manage page
 * from the booking's `manage_url`, moves the booking on the widget's calendar and cancels it
 * with the keyboard alone; a booking inside its notice period says so; no CSP violation, and
 * axe finds nothing serious in light or dark. Screenshots go to SLOTWISE_SHOTS_DIR (docs/ when
 * refreshing the docs' pictures), else a temporary directory.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import { mkdirSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import type { BrowserContext, Page } from "playwright-core"
import { expectStatus } from "../http/harness.js"
import { active, type Bench, poll, seriousViolations, startBench, tabTo, violations } from "./fixture.js"

let bench: Bench
let handle: string
const shots = process.env["SLOTWISE_SHOTS_DIR"] ?? join(tmpdir(), `slotwise-hosted-shots-${process.pid}`)

beforeAll(async () => {
  mkdirSync(shots, { recursive: true })
  bench = await startBench()
  handle = expectStatus(await bench.admin.get("/v1/account"), 200).handle
}, 60_000)
afterAll(async () => {
  await bench?.close()
})
beforeEach(async () => {
  await bench.server.advance(61_000)
})

const W = "[data-slotwise-widget]"
const heading = (page: Page) => page.locator(`${W} h2`)

/** The page is clean: no CSP violation so far, nothing serious for axe. */
const expectClean = async (page: Page, where: string) => {
  expect(await violations(page), where).toEqual([])
  expect(await seriousViolations(page), where).toEqual([])
}

const bookOnHostedPage = async (context: BrowserContext, day: string, start: string, shot?: string) => {
  const page = await bench.open(context, `${bench.server.url}/book/${handle}/sandbox/${bench.ids.colour}`)
  expect(await page.title()).toBe("Book Colour consultation with Salon Ana")
  await poll(() => heading(page).textContent()).toBe("Pick a date and time")
  await page.locator(`${W} button[data-day="${day}"]`).click()
  await poll(() => page.locator(`${W} button[data-start="${start}"]`).count()).toBe(1)
  if (shot !== undefined) await page.screenshot({ path: join(shots, shot), fullPage: true })
  await page.locator(`${W} button[data-start="${start}"]`).click()
  await poll(() => heading(page).textContent()).toBe("Your details")
  await page.locator(`${W} #f-name`).fill("Hana Hosted")
  await page.locator(`${W} #f-email`).fill("hana@example.com")
  await page.locator(`${W} #q-shade`).selectOption("Copper")
  await page.locator(`${W} #q-code`).fill("SPRING")
  await page.locator(`${W} #q-patch_test`).check()
  await page.locator(`${W} button[type="submit"]`).click()
  await poll(() => heading(page).textContent()).toBe("Booking confirmed")
  const id = await page.locator(`${W} [data-booking]`).getAttribute("data-booking")
  return { page, booking: expectStatus(await bench.admin.get(`/v1/bookings/${id}`), 200) }
}

describe("hosted pages in the browser", () => {
  it("books on the service page, then moves and cancels on the manage page; CSP-clean and axe-clean", async () => {
    const context = await bench.context()
    const { page, booking } = await bookOnHostedPage(context, "2027-03-30", "2027-03-30T08:00:00Z", "hosted-page-light.png")
    expect(booking).toMatchObject({ service_id: bench.ids.colour, start: "2027-03-30T08:00:00Z", status: "confirmed" })
    expect(booking.answers).toContainEqual({ question_id: "shade", label: "Which shade?", type: "select", value: "Copper" })
    await expectClean(page, "booking page")
    expect(booking.manage_url.startsWith(`${bench.server.url}/manage/`)).toBe(true)

    const manage = await bench.open(context, booking.manage_url)
    await poll(() => heading(manage).textContent()).toBe("Your booking")
    // 10:00 in Berlin, the client's zone (the browser's at booking time).
    await poll(() => manage.locator(`${W} dd[data-start]`).textContent()).toBe("Tuesday, March 30, 2027, 10:00 AM (Europe/Berlin)")
    expect(await manage.locator(`${W} dd[data-status]`).textContent()).toBe("Confirmed")
    expect(await manage.locator(`${W} dl`).nth(1).textContent()).toContain("Which shade?Copper")
    await manage.screenshot({ path: join(shots, "manage-page-light.png"), fullPage: true })
    await expectClean(manage, "manage page")

    // Move it with the widget's calendar.
    await manage.locator(`${W} button[data-action="move"]`).click()
    await poll(() => heading(manage).textContent()).toBe("Pick a date and time")
    await manage.locator(`${W} button[data-day="2027-03-31"]`).click()
    await manage.locator(`${W} button[data-start="2027-03-31T09:00:00Z"]`).click()
    await poll(() => heading(manage).textContent()).toBe("Move your booking?")
    expect(await manage.locator(`${W} dd[data-new-start]`).textContent()).toBe("Wednesday, March 31, 2027, 11:00 AM (Europe/Berlin)")
    await expectClean(manage, "move confirmation")
    await manage.locator(`${W} button[data-action="confirm-move"]`).click()
    await poll(() => manage.locator(`${W} .notice`).textContent()).toBe(
      "Your booking has been moved to Wednesday, March 31, 2027, 11:00 AM (Europe/Berlin)."
    )
    expect(expectStatus(await bench.admin.get(`/v1/bookings/${booking.id}`), 200)).toMatchObject({
      start: "2027-03-31T09:00:00Z",
      status: "confirmed"
    })

    // Cancel it with the keyboard alone: the action, the reason, the confirmation.
    await tabTo(manage, (a) => a.text === "Cancel booking")
    await manage.keyboard.press("Enter")
    await poll(() => heading(manage).textContent()).toBe("Cancel this booking?")
    expect(await active(manage)).toMatchObject({ tag: "H2" })
    await tabTo(manage, (a) => a.id === "reason")
    await manage.keyboard.type("Feeling unwell")
    await tabTo(manage, (a) => a.text === "Yes, cancel booking")
    await manage.keyboard.press("Enter")
    await poll(() => heading(manage).textContent()).toBe("Booking cancelled")
    expect(await manage.locator(`${W} .notice`).textContent()).toBe("Your booking has been cancelled.")
    expect(await manage.locator(`${W} [data-action]`).count()).toBe(0)
    expect(expectStatus(await bench.admin.get(`/v1/bookings/${booking.id}`), 200)).toMatchObject({
      status: "cancelled",
      cancellation_reason: "Feeling unwell"
    })
    await expectClean(manage, "cancelled")
    await context.close()
  })

  it("dark theme: the booking and manage pages pass axe and stay CSP-clean", async () => {
    const context = await bench.context({ colorScheme: "dark" })
    const { page, booking } = await bookOnHostedPage(context, "2027-03-31", "2027-03-31T12:00:00Z", "hosted-page-dark.png")
    await expectClean(page, "booking page, dark")
    const list = await bench.open(context, `${bench.server.url}/book/${handle}/sandbox`)
    expect(await list.locator(`a[data-service="${bench.ids.colour}"]`).count()).toBe(1)
    await expectClean(list, "service list, dark")
    const manage = await bench.open(context, booking.manage_url)
    await poll(() => heading(manage).textContent()).toBe("Your booking")
    await manage.screenshot({ path: join(shots, "manage-page-dark.png"), fullPage: true })
    await expectClean(manage, "manage page, dark")
    await context.close()
  })

  it("says plainly when the notice period has passed, and offers neither action; a bad link is a page saying so", async () => {
    expectStatus(await bench.admin.patch(`/v1/services/${bench.ids.trim}`, { cancellation_notice_minutes: 10_080 }), 200)
    const clientId = expectStatus(await bench.admin.post("/v1/clients", { name: "Nia Notice", email: "nia@example.com" }), 201).id
    const booking = expectStatus(
      await bench.admin.post("/v1/bookings", {
        service_id: bench.ids.trim,
        staff_id: bench.ids.ana,
        client_id: clientId,
        start: "2027-03-29T08:00:00Z"
      }),
      201
    )
    const context = await bench.context({ locale: "de-DE" })
    const manage = await bench.open(context, booking.manage_url)
    await poll(() => heading(manage).textContent()).toBe("Ihre Buchung")
    expect(await manage.locator(`${W} [data-refusal]`).textContent()).toBe(
      "Diese Buchung beginnt in weniger als 10080 Minuten und kann nicht mehr online geändert werden. Bitte wenden Sie sich direkt an das Unternehmen."
    )
    expect(await manage.locator(`${W} [data-action]`).count()).toBe(0)
    expect(await manage.locator("html").getAttribute("lang")).toBe("de")
    await expectClean(manage, "notice passed")

    const bad = await bench.open(context, `${bench.server.url}/manage/${booking.manage_url.split("/manage/")[1].slice(0, -3)}abc`)
    expect(await bad.locator("h1").textContent()).toBe("Dieser Link ist nicht mehr gültig")
    await expectClean(bad, "bad link")
    await context.close()
  })
})
