import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import { mkdirSync, readFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import type { Page } from "playwright-core"
import { gzipSync } from "node:zlib"
import { createHttpHandler } from "../../compose.js"
import { ADMIN_TOKEN, client, expectStatus, newAccount, request } from "../http/harness.js"
import { verifies, waitFor } from "../webhooks/receiver.js"
import { active, type Bench, COLOUR_QUESTIONS, events, poll, seriousViolations, startBench, tabTo, violations } from "./fixture.js"

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
    await poll(() => heading(page).textContent()).toBe("Choose who")
    await page.screenshot({ path: join(shots, "staff-light.png") })
    await page.locator(`#w button[data-staff="${bench.ids.ana}"]`).click()
    await poll(() => heading(page).textContent()).toBe("Pick a date and time")
    await page.locator("#w button[data-day=\"2027-03-29\"]").click()
    // 10:00 in Berlin (summer time from 28 March) is 08:00Z.
    const time = page.locator("#w button[data-start=\"2027-03-29T08:00:00Z\"]")
    await poll(() => time.textContent()).toBe("10:00 AM")
    await page.screenshot({ path: join(shots, "times-light.png") })
    await time.click()
    await poll(() => heading(page).textContent()).toBe("Your details")
    await page.locator("#w #f-name").fill("Mia Maus")
    await page.locator("#w #f-email").fill("mia@example.com")
    await page.locator("#w #f-phone").fill("+49 30 1234567")
    await page.screenshot({ path: join(shots, "details-light.png") })
    await page.locator("#w button[type=\"submit\"]").click()
    await poll(() => heading(page).textContent()).toBe("Booking confirmed")
    await page.screenshot({ path: join(shots, "done-light.png") })

    const { booking, client } = await readBack(page)
    expect(booking).toMatchObject({
      service_id: bench.ids.cut,
      staff_id: bench.ids.ana,
      start: "2027-03-29T08:00:00Z",
      status: "confirmed"
    })
    expect(client).toMatchObject({ name: "Mia Maus", email: "mia@example.com", phone: "+49 30 1234567", time_zone: "Europe/Berlin" })
    await delivered(booking.id)

    const seen = await events(page)
    for (const via of ["element", "window"] as const) {
      const mine = seen.filter((e) => e.via === via)
      expect(mine.map((e) => e.type)).toEqual(["slotwise:ready", "slotwise:slot_selected", "slotwise:booking_created"])
      expect(mine[1]!.payload).toMatchObject({ start: "2027-03-29T08:00:00Z", staff_id: bench.ids.ana })
      // The booking as the API answers a publishable key: the appointment, not the client's record.
      expect(mine[2]!.payload).toMatchObject({ id: booking.id, object: "booking", start: booking.start, status: "confirmed" })
      expect(mine[2]!.payload).not.toHaveProperty("client_id")
    }
    expect(seen.filter((e) => e.via === "element").every((e) => e.target === "w" && e.bubbles && e.composed)).toBe(true)
    expect(await violations(page)).toEqual([])
    await context.close()
  })

  it("books with the keyboard alone: focus on each step's heading, arrows in the calendar and the time grid", async () => {
    const context = await bench.context()
    const page = await bench.open(context, bench.host.page(widget({ key: bench.pk, service: bench.ids.trim })))
    await poll(() => heading(page).textContent()).toBe("Pick a date and time")
    expect(await active(page)).toMatchObject({ tag: "H2", text: "Pick a date and time" })
    await tabTo(page, (a) => a.day !== null)
    expect(await active(page)).toMatchObject({ day: "2027-03-26", outline: "solid" })
    for (let i = 0; i < 3; i++) await page.keyboard.press("ArrowRight")
    expect(await active(page)).toMatchObject({ day: "2027-03-29" })
    await page.keyboard.press("Enter")
    await poll(() => page.locator("#w h3").textContent()).toBe("Times on Monday, March 29, 2027")
    const starts = await page.locator("#w .time").evaluateAll((els) => els.map((e) => e.getAttribute("data-start")))
    expect(starts.at(-1)).toBe("2027-03-29T14:00:00Z")
    await tabTo(page, (a) => a.start !== null)
    expect(await active(page)).toMatchObject({ start: starts[0] })
    await page.keyboard.press("ArrowRight")
    expect(await active(page)).toMatchObject({ start: starts[1] })
    await page.keyboard.press("ArrowDown") // the next row: two columns at this width
    expect(await active(page)).toMatchObject({ start: starts[3] })
    await page.keyboard.press("ArrowLeft")
    expect(await active(page)).toMatchObject({ start: starts[2] })
    await page.keyboard.press("End")
    expect(await active(page)).toMatchObject({ start: starts.at(-1) })
    await page.keyboard.press("Space")
    await poll(() => heading(page).textContent()).toBe("Your details")
    expect(await active(page)).toMatchObject({ tag: "H2" })
    // Submitting empty: the errors are announced, the first invalid field gets focus.
    await tabTo(page, (a) => a.tag === "BUTTON" && a.text === "Book")
    await page.keyboard.press("Enter")
    await poll(() => active(page)).toMatchObject({ id: "f-name" })
    expect(await page.locator("#w #f-email").getAttribute("aria-invalid")).toBe("true")
    await poll(() => page.locator("#w [role=status].sr").textContent()).toBe("Please correct the marked fields.")
    await page.keyboard.type("Kai Keys")
    await page.keyboard.press("Tab")
    await page.keyboard.type("kai@example.com")
    await page.keyboard.press("Enter")
    await poll(() => heading(page).textContent()).toBe("Booking confirmed")
    expect(await active(page)).toMatchObject({ tag: "H2" })
    const { booking, client } = await readBack(page)
    expect(booking).toMatchObject({ service_id: bench.ids.trim, staff_id: bench.ids.ana, start: "2027-03-29T14:00:00Z" })
    expect(client).toMatchObject({ name: "Kai Keys", email: "kai@example.com" })
    await delivered(booking.id)
    // The .ics download is a Blob URL of an iCalendar file with the booked instants.
    expect(await page.locator("#w a[download]").getAttribute("href")).toMatch(/^blob:/)
    const [download] = await Promise.all([page.waitForEvent("download"), page.locator("#w a[download]").click()])
    expect(download.suggestedFilename()).toBe("booking.ics")
    const ics = readFileSync(await download.path(), "utf8")
    expect(ics).toContain("DTSTART:20270329T140000Z\r\nDTEND:20270329T150000Z")
    expect(await violations(page)).toEqual([])
    await context.close()
  })

  it("prefill, appearance (colour, font, radius), dark theme, German, and a time-zone switch", async () => {
    const context = await bench.context()
    const page = await bench.open(
      context,
      bench.host.page(widget({
        key: bench.pk,
        service: bench.ids.cut,
        staff: "any",
        theme: "dark",
        locale: "de",
        "primary-color": "#d946ef",
        "font-family": "Georgia, serif",
        radius: "2",
        "prefill-name": "Lena Vogel",
        "prefill-email": "lena@example.com",
        "prefill-notes": "Bitte pünktlich"
      }))
    )
    await poll(() => heading(page).textContent()).toBe("Datum und Uhrzeit wählen")
    expect(await page.locator("#w #month").textContent()).toBe("März 2027")
    const frame = await page.locator("#w .sw").evaluate((el) => {
      const s = getComputedStyle(el)
      return { bg: s.backgroundColor, color: s.color, font: s.fontFamily }
    })
    expect(frame).toEqual({ bg: "rgb(17, 24, 39)", color: "rgb(249, 250, 251)", font: "Georgia, serif" })
    await page.locator("#w button[data-day=\"2027-03-30\"]").click()
    const day = await page.locator("#w button[data-day=\"2027-03-30\"]").evaluate((el) => {
      const s = getComputedStyle(el)
      return { bg: s.backgroundColor, color: s.color, radius: s.borderTopLeftRadius }
    })
    expect(day).toEqual({ bg: "rgb(217, 70, 239)", color: "rgb(17, 24, 39)", radius: "2px" })
    expect(await page.locator("#w h3").textContent()).toBe("Uhrzeiten am Dienstag, 30. März 2027")
    const slot = page.locator("#w button[data-start=\"2027-03-30T08:00:00Z\"]")
    expect(await slot.textContent()).toBe("10:00")
    await page.locator("#w #tz").selectOption("America/New_York")
    await poll(() => slot.textContent()).toBe("04:00")
    await page.screenshot({ path: join(shots, "times-dark-de-newyork.png") })
    await slot.click()
    await poll(() => heading(page).textContent()).toBe("Ihre Angaben")
    expect(await page.locator("#w .summary").textContent()).toContain("Dienstag, 30. März 2027, 04:00 (America/New York)")
    expect(await page.locator("#w #f-name").inputValue()).toBe("Lena Vogel")
    expect(await page.locator("#w #f-email").inputValue()).toBe("lena@example.com")
    expect(await page.locator("#w #f-notes").inputValue()).toBe("Bitte pünktlich")
    expect(await page.locator("#w label[for=f-phone]").textContent()).toBe("Telefon (optional)")
    // Back releases the hold: the time is free again for everyone.
    await page.locator("#w button.link").click()
    await poll(async () => {
      const slots = expectStatus(
        await bench.admin.get(`/v1/availability/slots?service_id=${bench.ids.cut}&start=2027-03-30T08:00:00Z&end=2027-03-30T08:30:00Z`),
        200
      )
      return slots.data.length
    }).toBe(2)
    expect(await violations(page)).toEqual([])
    await context.close()
  })

  it("a time taken while the visitor types: the API's alternatives are offered and one of them books", async () => {
    const context = await bench.context()
    const page = await bench.open(
      context,
      bench.host.page(widget({ key: bench.pk, service: bench.ids.trim, "prefill-email": "ola@example.com" }))
    )
    await poll(() => heading(page).textContent()).toBe("Pick a date and time")
    await page.locator("#w button[data-day=\"2027-03-31\"]").click()
    await page.locator("#w button[data-start=\"2027-03-31T09:00:00Z\"]").click()
    await poll(() => heading(page).textContent()).toBe("Your details")
    // The hold lapses (3 minutes on the server's clock) and someone else books the time.
    await bench.server.advance(11 * 60_000)
    expectStatus(
      await bench.admin.post("/v1/bookings", {
        service_id: bench.ids.trim,
        staff_id: bench.ids.ana,
        start: "2027-03-31T09:00:00Z",
        client: { name: "Walk-in" }
      }),
      201
    )
    await page.locator("#w #f-name").fill("Ola Late")
    await page.locator("#w button[type=\"submit\"]").click()
    const alternatives = page.locator("#w button[data-alternative]")
    await poll(() => alternatives.count()).toBeGreaterThan(0)
    expect(await page.locator("#w .notice p").first().textContent()).toBe("That time has just been taken. Choose another time:")
    await page.screenshot({ path: join(shots, "alternatives-light.png") })
    expect(await seriousViolations(page)).toEqual([])
    expect(await active(page)).toMatchObject({ tag: "DIV" }) // the notice, announced
    const chosen = await alternatives.first().getAttribute("data-alternative")
    expect(chosen).not.toBe("2027-03-31T09:00:00Z")
    await alternatives.first().click()
    await poll(() => heading(page).textContent()).toBe("Your details")
    expect(await page.locator("#w #f-name").inputValue()).toBe("Ola Late")
    await page.locator("#w button[type=\"submit\"]").click()
    await poll(() => heading(page).textContent()).toBe("Booking confirmed")
    const { booking } = await readBack(page)
    expect(booking).toMatchObject({ start: chosen, staff_id: bench.ids.ana })
    const seen = await events(page)
    expect(seen.filter((e) => e.via === "element" && e.type === "slotwise:error").map((e) => e.payload.code)).toEqual(["slot_unavailable"])
    await context.close()
  })

  it("passes axe (no serious or critical violations) at every step, in light and dark", async () => {
    const found: Array<string> = []
    for (const scheme of ["light", "dark"] as const) {
      const context = await bench.context({ colorScheme: scheme })
      const page = await bench.open(context, bench.host.page(widget({ key: bench.pk, theme: "auto" })))
      const check = async (step: string) => {
        await page.screenshot({ path: join(shots, `${step}-${scheme}.png`) })
        found.push(...(await seriousViolations(page)).map((v) => `${scheme} ${step}: ${v}`))
      }
      await poll(() => heading(page).textContent()).toBe("Choose a service")
      await check("service")
      await page.locator(`#w button[data-service="${bench.ids.cut}"]`).click()
      await poll(() => heading(page).textContent()).toBe("Choose who")
      await check("staff")
      await page.locator(`#w button[data-staff="${bench.ids.ben}"]`).click()
      await poll(() => heading(page).textContent()).toBe("Pick a date and time")
      await page.locator("#w button[data-day=\"2027-03-31\"]").click()
      const start = scheme === "light" ? "2027-03-31T10:00:00Z" : "2027-03-31T11:00:00Z"
      await page.locator(`#w button[data-start="${start}"]`).waitFor()
      await check("times")
      await page.locator(`#w button[data-start="${start}"]`).click()
      await poll(() => heading(page).textContent()).toBe("Your details")
      await page.locator("#w button[type=\"submit\"]").click()
      await poll(() => page.locator("#w #f-email").getAttribute("aria-invalid")).toBe("true")
      await check("details-errors")
      await page.locator("#w #f-name").fill("Axel Axe")
      await page.locator("#w #f-email").fill(`axel-${scheme}@example.com`)
      await page.locator("#w button[type=\"submit\"]").click()
      await poll(() => heading(page).textContent()).toBe("Booking confirmed")
      await check("done")
      await context.close()
    }
    expect(found).toEqual([])
  })

  it("asks the service's questions as labelled native controls; refusals land at their control; axe-clean", async () => {
    const from = { headers: { origin: bench.host.origin } }
    // What the widget reads with its publishable key: the questions, never the account's metadata.
    const read = expectStatus(await client(bench.server.url, bench.pk).get(`/v1/services/${bench.ids.colour}`, from), 200)
    expect(read).toMatchObject({ questions: COLOUR_QUESTIONS })
    expect(read).not.toHaveProperty("metadata")

    const context = await bench.context()
    const page = await bench.open(context, bench.host.page(widget({ key: bench.pk, service: bench.ids.colour })))
    await poll(() => heading(page).textContent()).toBe("Pick a date and time")
    await page.locator("#w button[data-day=\"2027-03-30\"]").click()
    await page.locator("#w button[data-start=\"2027-03-30T08:00:00Z\"]").click()
    await poll(() => heading(page).textContent()).toBe("Your details")

    const control = (id: string) => page.locator(`#w #q-${id}`)
    const tags = await Promise.all(
      ["shade", "history", "colourist", "mobile", "age", "code", "patch_test"].map((id) =>
        control(id).evaluate((e) => `${e.tagName.toLowerCase()}${e.getAttribute("type") ? `[${e.getAttribute("type")}]` : ""}`)
      )
    )
    expect(tags).toEqual(["select", "textarea", "input[email]", "input[tel]", "input[number]", "input[text]", "input[checkbox]"])
    // Every control is named by its label; the help is its description; required ones say so.
    expect(await page.getByLabel("Which shade?").getAttribute("id")).toBe("q-shade")
    expect(await page.getByLabel("I had a patch test in the last 48 hours").getAttribute("aria-required")).toBe("true")
    expect(await control("history").getAttribute("aria-describedby")).toBe("hq-history")
    expect(await page.locator("#w #hq-history").textContent()).toBe("Products and dates, if you remember them")
    expect(await page.locator("#w fieldset legend").textContent()).toBe("Extra treatments")
    expect(await page.getByRole("group", { name: "Extra treatments" }).getByRole("checkbox").count()).toBe(2)
    expect(await control("code").getAttribute("aria-required")).toBe("true")
    expect(await control("history").getAttribute("aria-required")).toBeNull()

    // Checked here first: the unanswered required questions are marked, the first gets focus.
    await page.locator("#w #f-name").fill("Cora Colour")
    await page.locator("#w #f-email").fill("cora@example.com")
    await page.locator("#w button[type=\"submit\"]").click()
    await poll(() => active(page)).toMatchObject({ id: "q-shade" })
    await poll(() => page.locator("#w [role=status].sr").textContent()).toBe("Please correct the marked fields.")
    expect(await control("shade").getAttribute("aria-invalid")).toBe("true")
    expect(await control("shade").getAttribute("aria-describedby")).toBe("eq-shade")
    expect(await page.locator("#w #eq-shade").textContent()).toBe("Answer this question.")
    expect(await page.locator("#w #eq-patch_test").textContent()).toBe("Check this box to continue.")
    expect(await seriousViolations(page)).toEqual([])

    await control("shade").selectOption("Copper")
    await page.getByLabel("Toner").check()
    await page.getByLabel("Gloss").check()
    await control("history").fill("Henna, 2025")
    await control("age").fill("3")
    await control("code").fill("SPRING")
    await control("patch_test").check()
    // The shade on offer changes while the visitor fills the form: the API refuses the answer,
    // and its message lands at the control, focused and announced.
    const withoutCopper = COLOUR_QUESTIONS.map((q) => q.id === "shade" ? { ...q, options: ["Blonde", "Black"] } : q)
    expectStatus(await bench.admin.patch(`/v1/services/${bench.ids.colour}`, { questions: withoutCopper }), 200)
    try {
      await page.locator("#w #f-name").focus()
      await page.locator("#w button[type=\"submit\"]").click()
      await poll(() => page.locator("#w #eq-shade").textContent()).toBe("must be one of: Blonde, Black")
      await poll(() => active(page)).toMatchObject({ id: "q-shade" })
      expect(await control("shade").getAttribute("aria-invalid")).toBe("true")
      await poll(() => page.locator("#w [role=status].sr").textContent()).toBe("Please correct the marked fields.")
      expect(await seriousViolations(page)).toEqual([])
      await page.screenshot({ path: join(shots, "questions-refused.png") })

      await control("shade").selectOption("Blonde")
      await page.locator("#w button[type=\"submit\"]").click()
      await poll(() => heading(page).textContent()).toBe("Booking confirmed")
      const { booking } = await readBack(page)
      expect(booking.answers).toEqual([
        { question_id: "shade", label: "Which shade?", type: "select", value: "Blonde" },
        { question_id: "treatments", label: "Extra treatments", type: "multi_select", value: ["Gloss", "Toner"] },
        { question_id: "history", label: "Earlier colourings", type: "long_text", value: "Henna, 2025" },
        { question_id: "age", label: "Hair age in years", type: "number", value: 3 },
        { question_id: "code", label: "Voucher code", type: "text", value: "SPRING" },
        { question_id: "patch_test", label: "I had a patch test in the last 48 hours", type: "checkbox", value: true }
      ])
      await delivered(booking.id)
      const payload = JSON.parse(bench.receiver.received.find((r) => r.body.includes(booking.id))!.body)
      expect(payload.data.object.answers).toEqual(booking.answers)
      expect(await violations(page)).toEqual([])
    } finally {
      expectStatus(await bench.admin.patch(`/v1/services/${bench.ids.colour}`, { questions: COLOUR_QUESTIONS }), 200)
      await context.close()
    }
  })

  it("bad configuration: secret key (never sent), disallowed origin, revoked key, unknown service", async () => {
    const elsewhere = await newAccount(bench.server, { name: "Elsewhere", plan: "pro", allowed_origins: ["https://shop.example.com"] })
    const revoked = expectStatus(await bench.admin.post("/v1/api-keys", { name: "old widget", type: "publishable" }), 201)
    expectStatus(await bench.admin.del(`/v1/api-keys/${revoked.id}`), 200)
    const cases = [
      { key: bench.sk, code: "secret_key", text: "secret API key" },
      { key: elsewhere.keys.sandbox.publishable, code: "origin_not_allowed", text: "Online booking is not available on this website yet." },
      { key: revoked.secret, code: "invalid_key", text: "unknown or has been revoked" },
      { key: bench.pk, service: "svc_0000000000000000000000", code: "unknown_service", text: "does not exist" }
    ]
    const context = await bench.context()
    for (const c of cases) {
      const page = await context.newPage()
      await page.clock.setFixedTime(new Date("2027-03-26T08:00:00Z"))
      const apiCalls: Array<string> = []
      page.on("request", (r) => {
        if (r.url().startsWith(`${bench.server.url}/v1/`)) apiCalls.push(r.url())
      })
      const logged: Array<string> = []
      page.on("console", (m) => m.type() === "error" && logged.push(m.text()))
      await page.addInitScript(
        `window.__events=[];addEventListener("message",(e)=>{if(e.data&&e.data.type==="slotwise:error")__events.push({via:"window",type:e.data.type,payload:e.data.payload})});document.addEventListener("slotwise:error",(e)=>__events.push({via:"element",type:e.type,payload:e.detail}),true);`
      )
      await page.goto(bench.host.page(widget({ key: c.key, service: c.service ?? bench.ids.cut })))
      await poll(() => heading(page).textContent()).toBe("Booking unavailable")
      expect(await page.locator("#w [role=alert]").textContent()).toContain(c.text)
      await poll(async () => (await events(page)).map((e) => `${e.via} ${e.payload.code}`).sort()).toEqual([
        `element ${c.code}`,
        `window ${c.code}`
      ])
      if (c.code === "secret_key") expect(apiCalls).toEqual([])
      // The visitor reads a short message; the developer's console says how to allow the origin.
      if (c.code === "origin_not_allowed") {
        expect(logged.find((line) => line.startsWith("Slotwise widget:"))).toContain(
          `accounts update acc_… --allowed-origin ${bench.host.origin}`
        )
      }
      await page.close()
    }
    await context.close()
  })

  it("branding: always shown on the free plan, hidden on request on a paid plan", async () => {
    const free = await newAccount(bench.server, { name: "Freebie", plan: "free", allowed_origins: [bench.host.origin] })
    const context = await bench.context()
    const shown = async (key: string) => {
      const page = await bench.open(context, bench.host.page(widget({ key, "hide-branding": "true" })))
      await poll(() => heading(page).textContent()).not.toBe("Loading…")
      const footer = page.locator("#w .footer")
      const visible = await footer.isVisible() && (await footer.textContent()) === "Powered by Slotwise"
      await page.close()
      return visible
    }
    expect(await shown(free.keys.sandbox.publishable)).toBe(true)
    expect(await shown(bench.pk)).toBe(false)
    const config = expectStatus(
      await client(bench.server.url, free.keys.sandbox.publishable).get("/v1/widget/config", { headers: { origin: bench.host.origin } }),
      200
    )
    expect(config).toEqual({
      object: "widget_config",
      account_name: "Freebie",
      environment: "sandbox",
      branding_required: true,
      display_name: null,
      logo_url: null,
      primary_color: null,
      powered_by: true
    })
    await context.close()
  })

  it("the account's branding: logo and display name in the header, its colour and its Powered-by choice as defaults an option overrides", async () => {
    const LOGO = "https://logo.example/brand.png"
    const created = await newAccount(bench.server, { name: "Brand Salon", plan: "pro", allowed_origins: [bench.host.origin] })
    const api = client(bench.server.url, created.keys.sandbox.secret)
    expectStatus(
      await api.patch("/v1/account", {
        branding: { display_name: "Salon Lumière", logo_url: LOGO, primary_color: "#7c3aed", hide_powered_by: true }
      }),
      200
    )
    const stylist = expectStatus(await api.post("/v1/staff", { name: "Lou", time_zone: "Europe/Berlin" }), 201).id
    expectStatus(await api.post("/v1/services", { name: "Blow-dry", duration_minutes: 30, staff_ids: [stylist] }), 201)
    const config = expectStatus(
      await client(bench.server.url, created.keys.sandbox.publishable).get("/v1/widget/config", { headers: { origin: bench.host.origin } }),
      200
    )
    expect(config).toMatchObject({
      display_name: "Salon Lumière",
      logo_url: LOGO,
      primary_color: "#7c3aed",
      powered_by: false,
      branding_required: false
    })

    const context = await bench.context()
    const logoRequests: Array<Record<string, string>> = []
    // A 1×1 PNG stands in for the account's logo host.
    await context.route(LOGO, (route) => {
      logoRequests.push(route.request().headers())
      return route.fulfill({
        status: 200,
        contentType: "image/png",
        body: Buffer.from("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=", "base64")
      })
    })
    const open = async (attrs: Record<string, string>) => {
      const page = await bench.open(
        context,
        bench.host.page(widget({ key: created.keys.sandbox.publishable, ...attrs }), { imgSrc: "https://logo.example" })
      )
      await poll(() => heading(page).textContent()).toBe("Choose a service")
      return page
    }
    const primaryOf = (page: Page) => page.locator("#w .sw").evaluate((el) => getComputedStyle(el).getPropertyValue("--sw-primary").trim())

    const page = await open({})
    const logo = page.locator("#w .brand img")
    expect(await logo.getAttribute("alt")).toBe("Salon Lumière")
    expect(await logo.getAttribute("referrerpolicy")).toBe("no-referrer")
    expect(await logo.getAttribute("src")).toBe(LOGO)
    await poll(() => logo.evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth)).toBe(1)
    expect(logoRequests.length).toBeGreaterThan(0)
    for (const headers of logoRequests) expect(headers.referer).toBeUndefined()
    expect(await page.locator("#w .brand").textContent()).toBe("Salon Lumière")
    await poll(() => primaryOf(page)).toBe("#7c3aed")
    expect(await page.locator("#w .footer").isVisible()).toBe(false)
    expect(await violations(page)).toEqual([])
    expect(await seriousViolations(page)).toEqual([])
    await page.close()

    // The page's own options win: its colour, and showing "Powered by Slotwise".
    const overridden = await open({ "primary-color": "#0f766e", "hide-branding": "false" })
    await poll(() => primaryOf(overridden)).toBe("#0f766e")
    expect(await overridden.locator("#w .footer").textContent()).toBe("Powered by Slotwise")
    await overridden.close()

    // A downgrade to free keeps the choice but shows "Powered by Slotwise" again.
    expectStatus(await client(bench.server.url, ADMIN_TOKEN).patch(`/admin/v1/accounts/${created.account.id}`, { plan: "free" }), 200)
    const downgraded = await open({})
    await poll(() => downgraded.locator("#w .footer").isVisible()).toBe(true)
    expect(await downgraded.locator("#w .brand").textContent()).toBe("Salon Lumière")
    await downgraded.close()
    await context.close()
  })

  it("mounts elements added later; Slotwise.mount returns update() and destroy()", async () => {
    const context = await bench.context()
    const page = await bench.open(context, bench.host.page(`<div id="slot-here"></div>`))
    await page.waitForFunction(() => (window as any).Slotwise !== undefined)
    await page.evaluate(([key, service]) => {
      const el = document.createElement("div")
      el.id = "w"
      el.setAttribute("data-slotwise-widget", "")
      el.dataset.key = key!
      el.dataset.service = service!
      el.dataset.staff = "any"
      document.getElementById("slot-here")!.append(el)
    }, [bench.pk, bench.ids.trim])
    await poll(() => heading(page).textContent()).toBe("Pick a date and time")
    await page.evaluate(([key, service]) => {
      const el = document.createElement("div")
      el.id = "js"
      document.body.append(el)
      ;(window as any).handle = (window as any).Slotwise.mount(el, { key, service, staff: "any", locale: "de" })
    }, [bench.pk, bench.ids.trim])
    await poll(() => page.locator("#js h2").textContent()).toBe("Datum und Uhrzeit wählen")
    await page.evaluate(() => (window as any).handle.update({ locale: "en", theme: "dark" }))
    await poll(() => page.locator("#js h2").textContent()).toBe("Pick a date and time")
    expect(await page.locator("#js .sw").getAttribute("data-theme")).toBe("dark")
    await page.evaluate(() => (window as any).handle.destroy())
    expect(await page.evaluate(() => document.getElementById("js")!.shadowRoot!.childNodes.length)).toBe(0)
    const ready = (await events(page)).filter((e) => e.type === "slotwise:ready" && e.via === "element").map((e) => e.target)
    expect(ready).toEqual(["w", "js"])
    await context.close()
  })

  it("renews a hold 30 s before it lapses while the visitor types, and books with the renewed hold", async () => {
    const context = await bench.context()
    const page = await context.newPage()
    // The browser's timers run when the test says.
    await page.clock.install({ time: new Date("2027-03-26T08:00:00Z") })
    const holds: Array<string> = []
    page.on("request", (r) => {
      if (r.url().includes("/v1/availability/holds")) holds.push(r.method())
    })
    await page.goto(bench.host.page(widget({ key: bench.pk, service: bench.ids.trim })))
    await poll(() => heading(page).textContent()).toBe("Pick a date and time")
    await page.locator("#w button[data-day=\"2027-03-31\"]").click()
    await page.locator("#w button[data-start=\"2027-03-31T13:00:00Z\"]").click()
    await poll(() => heading(page).textContent()).toBe("Your details")
    expect(await page.locator("#w .summary").textContent()).toContain("We hold this time for you for 3 minutes.")
    await page.clock.runFor(149_000)
    expect(holds).toEqual(["POST"])
    await page.clock.runFor(1_000)
    await poll(() => holds).toEqual(["POST", "DELETE", "POST"])
    await page.locator("#w #f-name").fill("Rey Renewed")
    await page.locator("#w #f-email").fill("rey@example.com")
    const booked = page.waitForRequest((r) => r.url().endsWith("/v1/bookings") && r.method() === "POST")
    await page.locator("#w button[type=\"submit\"]").click()
    await poll(() => heading(page).textContent()).toBe("Booking confirmed")
    // The booking converted the renewed hold: one request, no fallback without it.
    expect(JSON.parse((await booked).postData() ?? "{}").hold_id).toMatch(/^hld_/)
    expect((await readBack(page)).booking).toMatchObject({ start: "2027-03-31T13:00:00Z" })
    expect(holds).toEqual(["POST", "DELETE", "POST"])
    await context.close()
  })

  it("goes on without a hold, at once, when the API holds no more for this visitor (429 without Retry-After)", async () => {
    const context = await bench.context()
    await context.route("**/v1/availability/holds", (route) =>
      route.request().method() !== "POST" ? route.continue() : route.fulfill({
        status: 429,
        headers: { "content-type": "application/problem+json", "access-control-allow-origin": bench.host.origin },
        body: JSON.stringify({
          type: "https://slotwise.dev/errors/hold_limit_reached",
          title: "Hold limit reached",
          status: 429,
          code: "hold_limit_reached",
          detail: "holds enough"
        })
      }))
    const page = await bench.open(
      context,
      bench.host.page(widget({ key: bench.pk, service: bench.ids.trim, "prefill-name": "Una Held", "prefill-email": "una@example.com" }))
    )
    await poll(() => heading(page).textContent()).toBe("Pick a date and time")
    await page.locator("#w button[data-day=\"2027-03-31\"]").click()
    await page.locator("#w button[data-start=\"2027-03-31T11:00:00Z\"]").click()
    await poll(() => heading(page).textContent()).toBe("Your details")
    expect(await page.locator("#w .summary").textContent()).not.toContain("We hold this time")
    expect(await page.locator("#w [role=status].muted").count()).toBe(0)
    await page.locator("#w button[type=\"submit\"]").click()
    await poll(() => heading(page).textContent()).toBe("Booking confirmed")
    expect((await readBack(page)).booking).toMatchObject({ start: "2027-03-31T11:00:00Z" })
    await context.close()
  })

  it("recovers: a refused hold offers alternatives, a failed request a retry, a 429 is waited out", async () => {
    const context = await bench.context()
    const page = await context.newPage()
    await page.clock.setFixedTime(new Date("2027-03-26T08:00:00Z"))
    // The slots call fails at the network level until the alert shows, then is rate limited once.
    let failing = true
    let limited = 0
    await page.route("**/v1/availability/slots?**", async (route) => {
      if (route.request().method() !== "GET") return route.continue()
      if (failing) return route.abort("connectionreset")
      if (limited++ === 0) {
        return route.fulfill({
          status: 429,
          headers: {
            "content-type": "application/problem+json",
            "retry-after": "1",
            "access-control-allow-origin": bench.host.origin,
            "access-control-expose-headers": "retry-after"
          },
          body: JSON.stringify({
            type: "https://slotwise.dev/errors/rate_limited",
            title: "Too many requests",
            status: 429,
            code: "rate_limited",
            detail: "slow down"
          })
        })
      }
      return route.continue()
    })
    await page.goto(bench.host.page(widget({ key: bench.pk, service: bench.ids.trim })))
    const alert = page.locator("#w [role=alert]")
    await poll(() => alert.textContent()).toContain("We could not reach the booking service.")
    failing = false
    await page.locator("#w button[data-focus=\"retry\"]").click()
    // Shown while the widget waits out Retry-After (1 s): polled without waiting for the element.
    await poll(() => page.locator("#w [role=status].muted").allTextContents()).toEqual(["Many requests right now. Trying again in 1 s…"])
    await poll(() => heading(page).textContent()).toBe("Pick a date and time")
    expect(limited).toBe(2)
    // Someone books 14:00Z on the 30th after the calendar was shown: picking it is refused (409).
    await page.locator("#w button[data-day=\"2027-03-30\"]").click()
    await page.locator("#w button[data-start=\"2027-03-30T12:00:00Z\"]").waitFor()
    expectStatus(
      await bench.admin.post("/v1/bookings", {
        service_id: bench.ids.trim,
        staff_id: bench.ids.ana,
        start: "2027-03-30T12:00:00Z",
        client: { name: "Phone call" }
      }),
      201
    )
    await page.locator("#w button[data-start=\"2027-03-30T12:00:00Z\"]").click()
    await poll(() => page.locator("#w button[data-alternative]").count()).toBeGreaterThan(0)
    expect(await page.locator("#w button[data-start=\"2027-03-30T12:00:00Z\"]").count()).toBe(0)
    const alternatives = await page.locator("#w button[data-alternative]").evaluateAll((els) =>
      els.map((e) => e.getAttribute("data-alternative"))
    )
    expect(alternatives).not.toContain("2027-03-30T12:00:00Z")
    await context.close()
  })

  it("/widget.js is served by the mounted handlers under their prefix", async () => {
    const handler = await createHttpHandler({ prefix: "/scheduling", webhooks: false })
    try {
      const reply = await handler.fetch(new Request("http://shop.example/scheduling/widget.js"))
      expect(reply.status).toBe(200)
      expect(reply.headers.get("etag")).toMatch(/^"[\w-]{22}"$/)
      expect(await reply.text()).toContain("Slotwise booking widget")
      expect((await handler.fetch(new Request("http://shop.example/widget.js"))).status).toBe(404)
    } finally {
      await handler.close()
    }
  })

  it("GET /widget.js: the built bundle, gzipped under 25 KB, with an ETag and a five-minute public cache", async () => {
    const first = await request(bench.server.url, "GET", "/widget.js", { headers: { "accept-encoding": "identity" } })
    expect(first.status).toBe(200)
    expect(first.headers.get("content-type")).toBe("text/javascript; charset=utf-8")
    expect(first.headers.get("cache-control")).toBe("public, max-age=300")
    expect(first.headers.get("x-ratelimit-limit")).toBeNull()
    const etag = first.headers.get("etag")!
    expect(etag).toMatch(/^"[\w-]{22}"$/)
    expect(gzipSync(first.text, { level: 9 }).byteLength).toBeLessThan(25 * 1024)
    expect(first.text).not.toMatch(/\beval\(|new Function\(|\.style\.|setAttribute\("style"/)
    const again = await request(bench.server.url, "GET", "/widget.js", { headers: { "if-none-match": etag } })
    expect(again.status).toBe(304)
    const gz = await request(bench.server.url, "HEAD", "/widget.js", { headers: { "accept-encoding": "gzip, br" } })
    expect(gz.headers.get("content-encoding")).toBe("gzip")
  })
})
