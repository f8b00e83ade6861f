/**
 * Team services and recurring bookings in real Chromium, on a host page under a strict CSP:
 * "anyone" on a round-robin service (the server assigns, the confirmation names who), a
 * collective service (everyone attends), a weekly series of four booked with the keyboard
 * alone, a refused series listing its blocked dates with reasons (then booked where free),
 * and the hosted booking page offering the same repeat choice. Every page is CSP-clean and
 * axe finds nothing serious, light and dark, English and German. Screenshots of the repeat
 * choice go to SLOTWISE_SHOTS_DIR (docs/ when refreshing the docs' pictures), else a
 * temporary directory.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import { mkdirSync, readFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import type { Page } from "playwright-core"
import { expectStatus } from "../http/harness.js"
import { active, type Bench, poll, seriousViolations, startBench, tabTo, violations } from "./fixture.js"

let bench: Bench
let handle: string
let weekly: string
let team: { roundRobin: string; collective: string }
const shots = process.env["SLOTWISE_SHOTS_DIR"] ?? join(tmpdir(), `slotwise-series-shots-${process.pid}`)

beforeAll(async () => {
  mkdirSync(shots, { recursive: true })
  bench = await startBench()
  handle = expectStatus(await bench.admin.get("/v1/account"), 200).handle
  weekly = await service({ name: "Physio", duration_minutes: 30, staff_ids: [bench.ids.ana], max_occurrences: 6 })
}, 60_000)
afterAll(async () => {
  await bench?.close()
})
// A fresh rate-limit window per test (the limiter counts on the server's controlled clock).
beforeEach(async () => {
  await bench.server.advance(61_000)
})

const service = async (body: Record<string, unknown>) => expectStatus(await bench.admin.post("/v1/services", body), 201).id as string

const W = "#w"
const widget = (service: string, extra = "") =>
  `<div id="w" data-slotwise-widget data-key="${bench.pk}" data-service="${service}"${extra}></div>`
const heading = (page: Page) => page.locator(`${W} h2`)

const expectClean = async (page: Page, where: string) => {
  expect(await violations(page), where).toEqual([])
  expect(await seriousViolations(page), where).toEqual([])
}

/** A booking made by the account, to take a member's time. */
const bookAs = async (staffId: string, serviceId: string, start: string) => {
  const clientId =
    expectStatus(await bench.admin.post("/v1/clients", { name: "Walk In", email: `walk-${start.replace(/\W/g, "")}@example.com` }), 201).id
  return expectStatus(await bench.admin.post("/v1/bookings", { service_id: serviceId, staff_id: staffId, client_id: clientId, start }), 201)
}

const fillDetails = async (page: Page, name: string, email: string) => {
  await page.locator(`${W} #f-name`).fill(name)
  await page.locator(`${W} #f-email`).fill(email)
}

const pickTime = async (page: Page, day: string, start: string) => {
  await page.locator(`${W} button[data-day="${day}"]`).click()
  await page.locator(`${W} button[data-start="${start}"]`).click()
}

const bookingShown = async (page: Page) => {
  const id = await page.locator(`${W} [data-booking]`).getAttribute("data-booking")
  return expectStatus(await bench.admin.get(`/v1/bookings/${id}`), 200)
}

/** The start of each event in the .ics file the confirmation offers, as the browser downloads it. */
const icsStarts = async (page: Page) => {
  const [download] = await Promise.all([page.waitForEvent("download"), page.locator(`${W} a[download]`).click()])
  const text = readFileSync((await download.path())!, "utf8")
  return text.split("\r\n").filter((line) => line.startsWith("DTSTART:"))
}

describe("team services in the widget", () => {
  beforeAll(async () => {
    const members = [bench.ids.ana, bench.ids.ben]
    team = {
      roundRobin: await service({ name: "Quick cut", duration_minutes: 30, staff_ids: members, assignment: "round_robin" }),
      collective: await service({ name: "Duo colour", duration_minutes: 60, staff_ids: members, assignment: "collective" })
    }
  })

  it("anyone on a round-robin service: each start once, booked without a member, the assigned one named", async () => {
    // Ana is taken at 10:00 (Berlin) on 29 March: only Ben is free then.
    await bookAs(bench.ids.ana, bench.ids.cut, "2027-03-29T08:00:00Z")
    const context = await bench.context()
    const page = await bench.open(context, bench.host.page(widget(team.roundRobin)))
    // No staff step: the server picks whoever is free.
    await poll(() => heading(page).textContent()).toBe("Pick a date and time")
    await page.locator(`${W} button[data-day="2027-03-29"]`).click()
    const starts = await page.locator(`${W} .time`).evaluateAll((els) => els.map((e) => e.getAttribute("data-start")))
    expect(starts.length).toBeGreaterThan(0)
    expect(new Set(starts).size).toBe(starts.length)
    await page.locator(`${W} button[data-start="2027-03-29T08:00:00Z"]`).click()
    await poll(() => heading(page).textContent()).toBe("Your details")
    await fillDetails(page, "Rita Robin", "rita@example.com")
    await page.locator(`${W} button[type="submit"]`).click()
    await poll(() => heading(page).textContent()).toBe("Booking confirmed")
    const booking = await bookingShown(page)
    expect(booking).toMatchObject({
      service_id: team.roundRobin,
      staff_id: bench.ids.ben,
      assigned_by: "round_robin",
      start: "2027-03-29T08:00:00Z"
    })
    await poll(() => page.locator(`${W} [data-attendees]`).textContent()).toBe("With Ben.")
    await expectClean(page, "round robin confirmation")
    await context.close()
  })

  it("a collective service: no staff step, and the confirmation names everyone who attends", async () => {
    const context = await bench.context({ locale: "de-DE" })
    const page = await bench.open(context, bench.host.page(widget(team.collective)))
    await poll(() => heading(page).textContent()).toBe("Datum und Uhrzeit wählen")
    await pickTime(page, "2027-03-30", "2027-03-30T12:00:00Z")
    await poll(() => heading(page).textContent()).toBe("Ihre Angaben")
    await fillDetails(page, "Carla Collective", "carla@example.com")
    await page.locator(`${W} button[type="submit"]`).click()
    await poll(() => heading(page).textContent()).toBe("Buchung bestätigt")
    const booking = await bookingShown(page)
    expect([...booking.staff_ids].sort()).toEqual([bench.ids.ana, bench.ids.ben].sort())
    await poll(() => page.locator(`${W} [data-attendees]`).textContent()).toBe("Bei Ana und Ben.")
    await expectClean(page, "collective confirmation")
    await context.close()
  })

  it("the hosted page of a round-robin service goes straight to the calendar and books anyone", async () => {
    const context = await bench.context({ colorScheme: "dark" })
    const page = await bench.open(context, `${bench.server.url}/book/${handle}/sandbox/${team.roundRobin}`)
    const W = "[data-slotwise-widget]"
    await poll(() => page.locator(`${W} h2`).textContent()).toBe("Pick a date and time")
    await page.locator(`${W} button[data-focus="next"]`).click()
    await page.locator(`${W} button[data-day="2027-04-02"]`).click()
    await page.locator(`${W} button[data-start="2027-04-02T12:00:00Z"]`).click()
    await poll(() => page.locator(`${W} h2`).textContent()).toBe("Your details")
    await page.locator(`${W} #f-name`).fill("Hosted Robin")
    await page.locator(`${W} #f-email`).fill("hrobin@example.com")
    await page.locator(`${W} button[type="submit"]`).click()
    await poll(() => page.locator(`${W} h2`).textContent()).toBe("Booking confirmed")
    const id = await page.locator(`${W} [data-booking]`).getAttribute("data-booking")
    const booking = expectStatus(await bench.admin.get(`/v1/bookings/${id}`), 200)
    expect(booking).toMatchObject({ service_id: team.roundRobin, assigned_by: "round_robin" })
    const name = booking.staff_id === bench.ids.ana ? "Ana" : "Ben"
    await poll(() => page.locator(`${W} [data-attendees]`).textContent()).toBe(`With ${name}.`)
    await expectClean(page, "hosted round-robin page")
    await context.close()
  })
})

describe("repeat choice in the widget", () => {
  it("books four weekly appointments with the keyboard alone: one series, four bookings, one .ics with four events", async () => {
    const context = await bench.context()
    const page = await bench.open(context, bench.host.page(widget(weekly)))
    await poll(() => heading(page).textContent()).toBe("Pick a date and time")
    await tabTo(page, (a) => a.day !== null)
    while ((await active(page)).day !== "2027-03-29") await page.keyboard.press("ArrowRight")
    await page.keyboard.press("Enter")
    await tabTo(page, (a) => a.start !== null)
    expect(await active(page)).toMatchObject({ start: "2027-03-29T07:00:00Z" })
    await page.keyboard.press("ArrowRight")
    expect(await active(page)).toMatchObject({ start: "2027-03-29T07:30:00Z" })
    await page.keyboard.press("Enter")
    await poll(() => heading(page).textContent()).toBe("Your details")
    await tabTo(page, (a) => a.id === "r-every")
    await page.keyboard.press("ArrowDown")
    // Every week; four appointments unless changed.
    await poll(() => page.locator(`${W} #r-summary`).textContent()).toBe("4 appointments, the last on Monday, April 19, 2027.")
    expect(await active(page)).toMatchObject({ id: "r-every" })
    await page.locator(W).screenshot({ path: join(shots, "widget-repeat-light.png") })
    await expectClean(page, "repeat choice, light")
    await tabTo(page, (a) => a.id === "r-count")
    expect(await page.locator(`${W} #r-count`).inputValue()).toBe("4")
    await tabTo(page, (a) => a.id === "f-name")
    await page.keyboard.type("Paula Physio")
    await tabTo(page, (a) => a.id === "f-email")
    await page.keyboard.type("paula@example.com")
    await tabTo(page, (a) => a.tag === "BUTTON" && a.text === "Book")
    await page.keyboard.press("Enter")
    await poll(() => heading(page).textContent()).toBe("Bookings confirmed")
    expect(await active(page)).toMatchObject({ tag: "H2" })

    const first = await bookingShown(page)
    expect(first.series_id).toMatch(/^ser_/)
    const series = expectStatus(await bench.admin.get(`/v1/booking-series/${first.series_id}`), 200)
    const occurrences = series.occurrences as Array<{ id: string; start: string; series_id: string; staff_id: string }>
    expect(occurrences.map((o) => o.start)).toEqual([
      "2027-03-29T07:30:00Z",
      "2027-04-05T07:30:00Z",
      "2027-04-12T07:30:00Z",
      "2027-04-19T07:30:00Z"
    ])
    for (const o of occurrences) {
      expect(expectStatus(await bench.admin.get(`/v1/bookings/${o.id}`), 200)).toMatchObject({
        series_id: first.series_id,
        staff_id: bench.ids.ana,
        status: "confirmed"
      })
    }
    expect(await page.locator(`${W} [data-occurrence]`).allTextContents()).toEqual([
      "Monday, March 29, 2027, 9:30 AM",
      "Monday, April 5, 2027, 9:30 AM",
      "Monday, April 12, 2027, 9:30 AM",
      "Monday, April 19, 2027, 9:30 AM"
    ])
    expect(await icsStarts(page)).toEqual([
      "DTSTART:20270329T073000Z",
      "DTSTART:20270405T073000Z",
      "DTSTART:20270412T073000Z",
      "DTSTART:20270419T073000Z"
    ])
    expect(await page.locator(`${W} a[download]`).textContent()).toBe("Add all to calendar (.ics)")
    await expectClean(page, "series confirmation")
    await context.close()
  })

  it("a refused series (409) lists each blocked date with its reason in words; the free ones can still be booked", async () => {
    // The third Wednesday is taken.
    await bookAs(bench.ids.ana, bench.ids.trim, "2027-04-14T08:00:00Z")
    const context = await bench.context({ locale: "de-DE", colorScheme: "dark" })
    const page = await bench.open(context, bench.host.page(widget(weekly, " data-theme=\"dark\"")))
    await poll(() => heading(page).textContent()).toBe("Datum und Uhrzeit wählen")
    await pickTime(page, "2027-03-31", "2027-03-31T08:00:00Z")
    await poll(() => heading(page).textContent()).toBe("Ihre Angaben")
    await page.locator(`${W} #r-every`).selectOption("1")
    await poll(() => page.locator(`${W} #r-summary`).textContent()).toBe("4 Termine, der letzte am Mittwoch, 21. April 2027.")
    await expectClean(page, "repeat choice, dark, German")
    // A count over the service's limit is refused at the field.
    await page.locator(`${W} #r-count`).fill("9")
    await fillDetails(page, "Sven Serie", "sven@example.com")
    await page.locator(`${W} button[type="submit"]`).click()
    await poll(() => active(page)).toMatchObject({ id: "r-count" })
    expect(await page.locator(`${W} #e-r-count`).textContent()).toBe("Geben Sie eine Zahl von 2 bis 6 ein.")
    await page.locator(`${W} #r-count`).fill("4")
    await page.locator(`${W} button[type="submit"]`).click()

    await poll(() => page.locator(`${W} [data-blocked]`).allTextContents()).toEqual(["Mittwoch, 14. April 2027, 10:00: bereits vergeben"])
    await poll(() => active(page)).toMatchObject({ tag: "DIV" })
    expect(await heading(page).textContent()).toBe("Ihre Angaben")
    // Nothing was booked: the series was refused whole.
    const before = expectStatus(await bench.admin.get(`/v1/bookings?limit=100`), 200)
    expect(before.data.filter((b: any) => b.service_id === weekly && b.start === "2027-03-31T08:00:00Z")).toEqual([])
    await expectClean(page, "blocked dates")

    await page.locator(`${W} button[data-focus="book-free"]`).click()
    await poll(() => heading(page).textContent()).toBe("Buchungen bestätigt")
    expect(await page.locator(`${W} [data-occurrence]`).allTextContents()).toEqual([
      "Mittwoch, 31. März 2027, 10:00",
      "Mittwoch, 7. April 2027, 10:00",
      "Mittwoch, 21. April 2027, 10:00"
    ])
    expect(await page.locator(`${W} [data-blocked]`).allTextContents()).toEqual(["Mittwoch, 14. April 2027, 10:00: bereits vergeben"])
    const first = await bookingShown(page)
    const series = expectStatus(await bench.admin.get(`/v1/booking-series/${first.series_id}`), 200)
    expect((series.occurrences as Array<{ start: string }>).map((o) => o.start)).toEqual([
      "2027-03-31T08:00:00Z",
      "2027-04-07T08:00:00Z",
      "2027-04-21T08:00:00Z"
    ])
    expect(await icsStarts(page)).toHaveLength(3)
    await expectClean(page, "series with a skipped date, dark, German")
    await context.close()
  })

  it("the hosted booking page passes the service's settings through: the repeat choice is there, CSP-clean", async () => {
    const context = await bench.context({ colorScheme: "dark" })
    const page = await bench.open(context, `${bench.server.url}/book/${handle}/sandbox/${weekly}`)
    await poll(() => page.locator("[data-slotwise-widget] h2").textContent()).toBe("Pick a date and time")
    await page.locator(`[data-slotwise-widget] button[data-focus="next"]`).click()
    await page.locator(`[data-slotwise-widget] button[data-day="2027-04-01"]`).click()
    await page.locator(`[data-slotwise-widget] button[data-start="2027-04-01T08:00:00Z"]`).click()
    await poll(() => page.locator("[data-slotwise-widget] h2").textContent()).toBe("Your details")
    await page.locator(`[data-slotwise-widget] #r-every`).selectOption("2")
    await page.locator(`[data-slotwise-widget] #r-count`).fill("3")
    await poll(() => page.locator(`[data-slotwise-widget] #r-summary`).textContent()).toBe(
      "3 appointments, the last on Thursday, April 29, 2027."
    )
    await page.locator("[data-slotwise-widget]").screenshot({ path: join(shots, "widget-repeat-dark.png") })
    await page.locator(`[data-slotwise-widget] #f-name`).fill("Hanne Hosted")
    await page.locator(`[data-slotwise-widget] #f-email`).fill("hanne@example.com")
    await page.locator(`[data-slotwise-widget] button[type="submit"]`).click()
    await poll(() => page.locator("[data-slotwise-widget] h2").textContent()).toBe("Bookings confirmed")
    expect(await page.locator(`[data-slotwise-widget] [data-occurrence]`).count()).toBe(3)
    await expectClean(page, "hosted page series")
    await context.close()
  })
})
