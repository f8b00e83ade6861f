/**
 * The widget's test bench: the server layer on 127.0.0.1 (in-memory storage, controlled
 * clock at 2027-03-26T08:00Z), a host site on ANOTHER local origin serving pages under a
 * strict CSP, a webhook receiver, and one headless Chromium (Debian's, driven by playwright-core).
 */
import * as http from "node:http"
import { readdirSync, readFileSync, statSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import type { AddressInfo } from "node:net"
import { expect } from "vitest"
import { createRequire } from "node:module"
import type { Browser, BrowserContext, Page } from "playwright-core"
import { buildWidget, widgetOutfile } from "../../widget/build.mjs"
import { launchChromium } from "../support/browser.js"
import { client, type Client, expectStatus, newAccount, startServer, type TestServer } from "../http/harness.js"
import { type Receiver, startReceiver } from "../webhooks/receiver.js"

/** The browser's wall clock: the server's controlled clock starts here too. */
export const NOW = "2027-03-26T08:00:00Z"

/** Polls with a deadline that tolerates a loaded machine (vitest's default is one second). */
export const poll = <T>(check: () => T | Promise<T>): ReturnType<typeof expect.poll<T>> =>
  expect.poll(check, { timeout: 10_000, interval: 20 })

export const launchBrowser: () => Promise<Browser> = launchChromium

/** Builds dist/widget.js unless it is newer than every widget source. */
export const ensureWidgetBuilt = async (): Promise<string> => {
  const dir = fileURLToPath(new URL("../../widget/", import.meta.url))
  const newest = Math.max(...readdirSync(dir).map((f) => statSync(join(dir, f)).mtimeMs))
  const built = statSync(widgetOutfile, { throwIfNoEntry: false })?.mtimeMs ?? 0
  if (built < newest) await buildWidget()
  return widgetOutfile
}

export const axeSource = (): string => readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8")

export interface HostSite {
  readonly origin: string
  /** Serves `body` as a page under a strict CSP (only `api` for scripts and connections); returns its URL. */
  readonly page: (body: string, options?: { readonly csp?: boolean; readonly imgSrc?: string }) => string
  readonly close: () => Promise<void>
}

/** The policy docs/widget.md gives host pages: the API's origin for scripts and connections, nothing else. */
export const cspFor = (api: string, imgSrc?: string) =>
  `default-src 'none'; script-src ${api}; connect-src ${api}; ${
    imgSrc === undefined ? "" : `img-src ${imgSrc}; `
  }base-uri 'none'; form-action 'none'`

export const startHost = async (api: string): Promise<HostSite> => {
  const pages = new Map<string, { body: string; csp: boolean; imgSrc: string | undefined }>()
  const server = http.createServer((req, res) => {
    const page = pages.get(req.url ?? "")
    if (page === undefined) {
      res.writeHead(404).end()
      return
    }
    res.writeHead(200, {
      "content-type": "text/html; charset=utf-8",
      "cache-control": "no-store",
      ...(page.csp ? { "content-security-policy": cspFor(api, page.imgSrc) } : {})
    })
    res.end(
      `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Host page</title></head>` +
        `<body><main><h1>Book an appointment</h1>${page.body}</main>` +
        `<script src="${api}/widget.js" async></script></body></html>`
    )
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  let n = 0
  return {
    origin,
    page: (body, options = {}) => {
      const path = `/p${++n}`
      pages.set(path, { body, csp: options.csp ?? true, imgSrc: options.imgSrc })
      return origin + path
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      })
  }
}

/** Records widget events (on the element and on window) and CSP violations from the first script on. */
const RECORDER = `
window.__events = []; window.__violations = [];
addEventListener("message", (e) => {
  if (e.data && typeof e.data.type === "string" && e.data.type.startsWith("slotwise:")) __events.push({ via: "window", type: e.data.type, payload: e.data.payload });
});
for (const type of ["slotwise:ready", "slotwise:slot_selected", "slotwise:booking_created", "slotwise:error"]) {
  document.addEventListener(type, (e) => __events.push({ via: "element", type, payload: e.detail, target: e.target && e.target.id, bubbles: e.bubbles, composed: e.composed }), true);
}
document.addEventListener("securitypolicyviolation", (e) => __violations.push({ directive: e.violatedDirective, blocked: e.blockedURI }));
`

export interface Recorded {
  readonly via: "window" | "element"
  readonly type: string
  readonly payload: any
  readonly target?: string
  readonly bubbles?: boolean
  readonly composed?: boolean
}

export const events = (page: Page): Promise<Array<Recorded>> => page.evaluate(() => (window as any).__events)
export const violations = (page: Page): Promise<Array<unknown>> => page.evaluate(() => (window as any).__violations)

export interface Bench {
  readonly server: TestServer
  readonly host: HostSite
  readonly browser: Browser
  readonly receiver: Receiver
  /** Secret-key client and keys of a pro account that allows the host origin. */
  readonly admin: Client
  readonly pk: string
  readonly sk: string
  readonly webhookSecret: string
  readonly ids: { readonly ana: string; readonly ben: string; readonly cut: string; readonly trim: string; readonly colour: string }
  readonly context: (
    options?: { readonly colorScheme?: "light" | "dark"; readonly timezoneId?: string; readonly locale?: string }
  ) => Promise<BrowserContext>
  readonly open: (context: BrowserContext, url: string) => Promise<Page>
  readonly close: () => Promise<void>
}

/** The questions of the bench's colour consultation: one of each kind of control. */
export const COLOUR_QUESTIONS = [
  { id: "shade", label: "Which shade?", type: "select", required: true, options: ["Blonde", "Copper", "Black"] },
  { id: "treatments", label: "Extra treatments", type: "multi_select", required: false, options: ["Gloss", "Toner"] },
  { id: "history", label: "Earlier colourings", type: "long_text", required: false, help: "Products and dates, if you remember them" },
  { id: "colourist", label: "Colourist's email", type: "email", required: false },
  { id: "mobile", label: "Mobile for reminders", type: "phone", required: false },
  { id: "age", label: "Hair age in years", type: "number", required: false },
  { id: "code", label: "Voucher code", type: "text", required: true },
  { id: "patch_test", label: "I had a patch test in the last 48 hours", type: "checkbox", required: true }
]

export const startBench = async (): Promise<Bench> => {
  await ensureWidgetBuilt()
  const browser = await launchBrowser()
  const server = await startServer({ now: NOW, allowPrivateWebhooks: true })
  const host = await startHost(server.url)
  const receiver = await startReceiver()
  const created = await newAccount(server, { name: "Salon Ana", plan: "pro", allowed_origins: [host.origin] })
  const sk: string = created.keys.sandbox.secret
  const pk: string = created.keys.sandbox.publishable
  const admin = client(server.url, sk)
  const staff = async (name: string) =>
    expectStatus(await admin.post("/v1/staff", { name, email: `${name.toLowerCase()}@example.com`, time_zone: "Europe/Berlin" }), 201)
      .id as string
  const ana = await staff("Ana")
  const ben = await staff("Ben")
  for (const id of [ana, ben]) {
    expectStatus(
      await admin.post("/v1/availability", {
        staff_id: id,
        type: "weekly",
        weekdays: [1, 2, 3, 4, 5],
        start_time: "09:00",
        end_time: "17:00"
      }),
      201
    )
  }
  const cut = expectStatus(
    await admin.post("/v1/services", {
      name: "Haircut",
      duration_minutes: 30,
      staff_ids: [ana, ben],
      price: { amount: 3500, currency: "EUR" }
    }),
    201
  ).id as string
  const trim = expectStatus(await admin.post("/v1/services", { name: "Beard trim", duration_minutes: 60, staff_ids: [ana] }), 201)
    .id as string
  const colour = expectStatus(
    await admin.post("/v1/services", {
      name: "Colour consultation",
      duration_minutes: 30,
      staff_ids: [ana],
      questions: COLOUR_QUESTIONS,
      metadata: { internal_code: "colour-7" }
    }),
    201
  ).id as string
  const hook = expectStatus(await admin.post("/v1/webhooks", { url: receiver.url, events: ["booking.created"] }), 201)
  return {
    server,
    host,
    browser,
    receiver,
    admin,
    pk,
    sk,
    webhookSecret: hook.secret,
    ids: { ana, ben, cut, trim, colour },
    context: async (options = {}) => {
      const context = await browser.newContext({
        timezoneId: options.timezoneId ?? "Europe/Berlin",
        locale: options.locale ?? "en-US",
        colorScheme: options.colorScheme ?? "light",
        viewport: { width: 900, height: 900 }
      })
      // Fail a step in seconds, with its locator named, rather than at the test's timeout.
      context.setDefaultTimeout(10_000)
      return context
    },
    open: async (context, url) => {
      const page = await context.newPage()
      await page.clock.setFixedTime(new Date(NOW))
      await page.addInitScript(RECORDER)
      await page.goto(url)
      return page
    },
    close: async () => {
      await browser.close()
      await receiver.close()
      await host.close()
      await server.close()
    }
  }
}

/** axe-core's serious and critical findings on the page (axe evaluated through CDP: the page's CSP allows no inline script). */
export const seriousViolations = async (page: Page): Promise<Array<string>> => {
  if (!(await page.evaluate(() => "axe" in window))) await page.evaluate(axeSource())
  const result = await page.evaluate(() => (window as any).axe.run(document, { resultTypes: ["violations"] }))
  return (result.violations as Array<{ id: string; impact: string; nodes: Array<{ target: unknown }> }>)
    .filter((v) => v.impact === "serious" || v.impact === "critical")
    .map((v) => `${v.id} ${JSON.stringify(v.nodes.map((n) => n.target))}`)
}

export interface Active {
  readonly tag: string
  readonly text: string
  readonly id: string
  readonly day: string | null
  readonly start: string | null
  readonly outline: string
}

/** The focused element inside the widget's shadow root. */
export const active = (page: Page): Promise<Active> =>
  page.evaluate(() => {
    let el = document.activeElement
    while (el?.shadowRoot?.activeElement) el = el.shadowRoot.activeElement
    const e = el as HTMLElement
    return {
      tag: e.tagName,
      text: (e.textContent ?? "").trim(),
      id: e.id,
      day: e.getAttribute("data-day"),
      start: e.getAttribute("data-start"),
      outline: getComputedStyle(e).outlineStyle
    }
  })

export const tabTo = async (page: Page, wanted: (a: Active) => boolean) => {
  for (let i = 0; i < 30; i++) {
    await page.keyboard.press("Tab")
    if (wanted(await active(page))) return
  }
  throw new Error(`Tab never reached the element; stopped at ${JSON.stringify(await active(page))}`)
}
