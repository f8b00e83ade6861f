/**
 * The README's "Try the widget", run as written against a real `slotwise serve` on a port
 * the system picks (never the default 8080): the curl walk-through makes a service, the
 * try-it block fills examples/widget.html and serves it with Python's static server, and
 * Chromium opens it. On a port that no account allows yet the visitor reads a short message
 * and the developer's console says how to allow the origin; once allowed as it says, the
 * widget shows the free times.
 */
import { type ChildProcess, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as net from "node:net"
import * as os from "node:os"
import * as path from "node:path"
import type { Browser } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { client, expectStatus, killServers, serveProcess } from "../http/harness.js"
import { launchChromium } from "../support/browser.js"
import { ensureWidgetBuilt, poll } from "../widget/fixture.js"
import { readmeBlock, runBash, walkthrough } from "./shell.js"

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "slotwise-try-"))
let browser: Browser | undefined
let staticServer: ChildProcess | undefined
beforeAll(async () => {
  await ensureWidgetBuilt()
  browser = await launchChromium()
}, 120_000)
afterAll(async () => {
  // The block's shell and Python share a process group of their own.
  if (staticServer?.pid !== undefined && staticServer.exitCode === null) process.kill(-staticServer.pid, "SIGTERM")
  killServers()
  await browser?.close()
  fs.rmSync(dir, { recursive: true, force: true })
})

/** A port nothing listens on now (the system's pick, released at once). */
const freePort = () =>
  new Promise<number>((resolve) => {
    const probe = net.createServer().listen(0, "127.0.0.1", () => {
      const { port } = probe.address() as net.AddressInfo
      probe.close(() => resolve(port))
    })
  })

const answers = (url: string) => fetch(url).then((r) => r.ok, () => false)

describe("README: try the widget", () => {
  it("on any port of the server: a refused origin says how to allow it; allowed, the widget shows free times", async () => {
    const server = await serveProcess(["--memory"])
    expect(new URL(server.url).port).not.toBe("8080")
    const printed = (label: string) => server.lines.map((l) => new RegExp(`${label}\\s+(\\S+)`).exec(l)?.[1]).find((k) => k !== undefined)!
    const sk = printed("sandbox secret key")
    const pk = printed("sandbox publishable key")
    expect(pk).toMatch(/^pk_test_/)
    const made = runBash(walkthrough(), { KEY: sk, BASE: server.url })
    expect(made.stderr).toBe("")

    // The block as written, with this run's key, server, folder and page port.
    const block = readmeBlock("widget-try")
    const opened = /then open (http:\/\/localhost:(\d+))/.exec(block)
    expect(opened, "the block says which address to open").not.toBeNull()
    expect(block).toContain(`http.server ${opened![2]} `)
    const port = await freePort()
    const script = block
      .replace(/^(PK|BASE)=.*$/gm, "")
      .replaceAll("/tmp/slotwise-try", dir)
      .replace(`http.server ${opened![2]} `, `http.server ${port} `)
    staticServer = spawn("bash", ["--noprofile", "--norc", "-euo", "pipefail", "-c", script], {
      cwd: path.resolve(import.meta.dirname, "../.."),
      env: { ...process.env, PK: pk, BASE: server.url },
      stdio: "ignore",
      detached: true
    })
    const origin = `http://localhost:${port}`
    await poll(() => answers(origin)).toBe(true)
    expect(fs.readFileSync(path.join(dir, "index.html"), "utf8")).not.toContain("127.0.0.1:8080")

    const page = await browser!.newPage()
    const logged: Array<string> = []
    page.on("console", (message) => {
      if (message.type() === "error") logged.push(message.text())
    })
    const widget = page.locator("[data-slotwise-widget]")
    await page.goto(origin)
    await poll(() => widget.locator("h2").textContent()).toBe("Booking unavailable")
    expect(await widget.locator("[role=alert]").textContent()).toBe("Online booking is not available on this website yet.")
    const told = logged.find((line) => line.includes("--allowed-origin"))
    expect(told).toContain(`slotwise accounts update acc_… --allowed-origin ${origin}`)
    expect(told).toContain(`PATCH /v1/account`)

    // The server's own refusal of the preflight says the same.
    const preflight = await fetch(`${server.url}/v1/widget/config`, {
      method: "OPTIONS",
      headers: { origin, "access-control-request-method": "GET", "access-control-request-headers": "authorization" }
    })
    expect(preflight.status).toBe(403)
    expect((await preflight.json()).detail).toContain(`--allowed-origin ${origin}`)

    // Allowed as the message says (the account's own PATCH), the page books.
    const api = client(server.url, sk)
    const account = expectStatus(await api.get("/v1/account"), 200)
    expectStatus(await api.patch("/v1/account", { allowed_origins: [...account.allowed_origins, origin] }), 200)
    await page.reload()
    const heading = widget.locator("h2")
    await poll(() => heading.textContent()).toBe("Choose a service")
    await widget.locator("button[data-service]", { hasText: "Haircut" }).click()
    await poll(() => heading.textContent()).toMatch(/^(Choose who|Pick a date and time)$/)
    if (await heading.textContent() === "Choose who") await widget.locator("button[data-staff]").first().click()
    await poll(() => heading.textContent()).toBe("Pick a date and time")
    // Late in a month its remaining days may all be taken: the next month has free times.
    if (await widget.locator("button[data-start]").count() === 0) await widget.locator("button[data-focus=\"next\"]").click()
    await poll(() => widget.locator("button[data-start]").count()).toBeGreaterThan(0)
    await page.close()
  }, 120_000)
})
