/**
 * Booking widget benchmark: the bundle's size (raw and gzipped), and in headless Chromium the
 * median time from navigation to the first times shown over 10 cold loads (a fresh browser
 * context each: no HTTP cache, no CORS preflight cache) of a host page on another origin,
 * against `slotwise serve --memory`; and, in the same run, the slots API call alone.
 * Run: npx tsx bench/widget.ts
 */
import { type ChildProcess, spawn } from "node:child_process"
import { readFileSync } from "node:fs"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import * as path from "node:path"
import * as readline from "node:readline"
import { fileURLToPath } from "node:url"
import { gzipSync } from "node:zlib"
import { chromium } from "playwright-core"

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..")
const LOADS = 10
const ADMIN = "bench-admin-token"
const children: Array<ChildProcess> = []
process.on("exit", () => {
  for (const c of children) if (c.exitCode === null) c.kill("SIGKILL")
})

const median = (xs: Array<number>) => {
  const s = [...xs].sort((a, b) => a - b)
  return s.length % 2 === 1 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2
}

const serve = (): Promise<string> =>
  new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["bin/slotwise.js", "serve", "--memory", "--port", "0", "--admin-token", ADMIN], {
      cwd: root,
      stdio: ["ignore", "pipe", "inherit"]
    })
    children.push(child)
    readline.createInterface({ input: child.stdout! }).on("line", (line) => {
      const m = /^listening on (http:\/\/\S+)$/.exec(line)
      if (m) resolve(m[1]!)
    })
    child.on("exit", (code) => reject(new Error(`slotwise serve exited ${code}`)))
  })

/** POST a JSON body with a bearer key; the parsed reply, or a thrown error naming the status. */
const post = async (url: string, key: string, body: unknown) => {
  const response = await fetch(url, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify(body)
  })
  if (!response.ok) throw new Error(`POST ${url}: ${response.status} ${await response.text()}`)
  return response.json() as Promise<any>
}

const api = await serve() // builds dist/ and dist/widget.js first when they are stale
const bundle = readFileSync(path.join(root, "dist", "widget.js"))
console.log(
  `bundle dist/widget.js: ${(bundle.byteLength / 1024).toFixed(1)} KB raw, ${
    (gzipSync(bundle, { level: 9 }).byteLength / 1024).toFixed(1)
  } KB gzipped`
)

const host = http.createServer()
await new Promise<void>((resolve) => host.listen(0, "127.0.0.1", resolve))
const origin = `http://127.0.0.1:${(host.address() as AddressInfo).port}`

const { keys } = await post(`${api}/admin/v1/accounts`, ADMIN, { name: "Bench", plan: "business", allowed_origins: [origin] })
const sk = keys.sandbox.secret
const pk = keys.sandbox.publishable
const staff = await post(`${api}/v1/staff`, sk, { name: "Ana", time_zone: "UTC" })
await post(`${api}/v1/availability`, sk, {
  staff_id: staff.id,
  type: "weekly",
  weekdays: [1, 2, 3, 4, 5, 6, 7],
  start_time: "08:00",
  end_time: "20:00"
})
const service = await post(`${api}/v1/services`, sk, { name: "Cut", duration_minutes: 30, staff_ids: [staff.id] })

host.on("request", (_req, res) => {
  res.writeHead(200, {
    "content-type": "text/html; charset=utf-8",
    "content-security-policy": `default-src 'none'; script-src ${api}; connect-src ${api}`
  })
  res.end(
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Bench</title></head><body>` +
      `<div id="w" data-slotwise-widget data-key="${pk}" data-service="${service.id}" data-staff="any"></div>` +
      `<script src="${api}/widget.js" async></script></body></html>`
  )
})

// The widget's `slotwise:ready` fires as the calendar with the first day's times is rendered.
const RECORD = `document.addEventListener("slotwise:ready", () => { window.__shown = performance.now() })`
const browser = await chromium.launch({
  executablePath: process.env.SLOTWISE_TEST_CHROMIUM || "/usr/bin/chromium",
  args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync"]
})
const navigation: Array<number> = []
const fromScript: Array<number> = []
for (let i = 0; i < LOADS; i++) {
  const context = await browser.newContext()
  const page = await context.newPage()
  await page.addInitScript(RECORD)
  await page.goto(origin)
  await page.waitForFunction(() =>
    (window as any).__shown !== undefined && document.getElementById("w")!.shadowRoot!.querySelector(".time") !== null
  )
  const t = await page.evaluate(() => {
    const script = performance.getEntriesByType("resource").find((e) => e.name.endsWith("/widget.js")) as PerformanceResourceTiming
    return { shown: (window as any).__shown as number, scriptLoaded: script.responseEnd }
  })
  navigation.push(t.shown)
  fromScript.push(t.shown - t.scriptLoaded)
  await context.close()
}
await browser.close()

const month = new Date()
const start = new Date(Date.UTC(month.getUTCFullYear(), month.getUTCMonth(), 0)).toISOString().replace(".000Z", "Z")
const end = new Date(Date.UTC(month.getUTCFullYear(), month.getUTCMonth() + 1, 2)).toISOString().replace(".000Z", "Z")
const slotsUrl = `${api}/v1/availability/slots?service_id=${service.id}&start=${start}&end=${end}`
const slotsCall: Array<number> = []
for (let i = 0; i < LOADS; i++) {
  const t0 = performance.now()
  const response = await fetch(slotsUrl, { headers: { authorization: `Bearer ${pk}`, origin } })
  await response.arrayBuffer()
  if (!response.ok) throw new Error(`slots: ${response.status}`)
  slotsCall.push(performance.now() - t0)
}

const ms = (x: number) => `${x.toFixed(0)} ms`
console.log(
  `navigation → first times shown: median ${ms(median(navigation))} over ${LOADS} cold loads (min ${ms(Math.min(...navigation))}, max ${
    ms(Math.max(...navigation))
  })`
)
console.log(`widget.js loaded → first times shown: median ${ms(median(fromScript))}`)
console.log(`GET /v1/availability/slots (a month, from Node): median ${median(slotsCall).toFixed(1)} ms`)
host.close()
process.exit(0)
