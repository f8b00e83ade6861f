/**
 * The sign-in and consent pages in real Chromium: sign in and allow, sign in and deny, a
 * wrong password, the CSRF token enforced, a user signed in through one account's client
 * asked to sign in again at another account's; no Content-Security-Policy violations; light and
 * dark screenshots (written to $OAUTH_SCREENSHOTS or the system temp directory).
 */
import { mkdirSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import type { Browser, Page } from "playwright-core"
import { launchChromium } from "../support/browser.js"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as oauth from "oauth4webapi"
import { authorizeUrl, insecure, REDIRECT_URI, registerClient } from "./agent.js"
import { type OAuthTestServer, PASSWORD, startOAuthServer } from "./harness.js"

const SHOTS = process.env.OAUTH_SCREENSHOTS ?? join(tmpdir(), "slotwise-oauth-screens")

let server: OAuthTestServer
let browser: Browser
beforeAll(async () => {
  mkdirSync(SHOTS, { recursive: true })
  server = await startOAuthServer()
  browser = await launchChromium()
}, 60_000)
afterAll(async () => {
  await browser?.close()
  await server?.close()
})

/** A fresh page whose CSP violations are collected and whose redirect to the client is caught. */
const open = async (colorScheme: "light" | "dark" = "light") => {
  const context = await browser.newContext({ colorScheme })
  const page = await context.newPage()
  const violations: Array<string> = []
  page.on("console", (message) => {
    if (/Content Security Policy|Refused to/i.test(message.text())) violations.push(message.text())
  })
  const callbacks: Array<URL> = []
  await page.route(`${REDIRECT_URI}**`, async (route) => {
    callbacks.push(new URL(route.request().url()))
    await route.fulfill({ status: 200, contentType: "text/plain", body: "back at the client" })
  })
  return { page, context, violations, callbacks }
}

const signIn = async (page: Page, password = PASSWORD, email = server.user.email) => {
  await page.fill("#email", email)
  await page.fill("#password", password)
  await page.click("button:has-text('Sign in')")
}

describe("in Chromium", () => {
  it("signs in and allows: back at the client with a code; light and dark screenshots", async () => {
    for (const scheme of ["light", "dark"] as const) {
      const setup = await registerClient(server, { name: "Acme Calendar Sync" })
      const { url, state } = await authorizeUrl(setup, { scope: "bookings:read bookings:write services:read" })
      const { page, context, violations, callbacks } = await open(scheme)
      const response = await page.goto(url.href)
      expect(response!.headers()["x-frame-options"]).toBe("DENY")
      expect(response!.headers()["content-security-policy"]).toContain("frame-ancestors 'none'")
      expect(await page.locator("h1").textContent()).toBe("Sign in")
      await page.screenshot({ path: join(SHOTS, `sign-in-${scheme}.png`) })
      await signIn(page)
      await page.waitForSelector("text=Allow Acme Calendar Sync?")
      const text = await page.locator("main").innerText()
      expect(text).toContain("sandbox (test data)")
      expect(text).toContain("See your bookings")
      expect(text).toContain("Create, change and cancel bookings")
      expect(text).toContain("See your services")
      expect(text).toContain(server.user.email)
      await page.screenshot({ path: join(SHOTS, `consent-${scheme}.png`) })
      await page.click("button:has-text('Allow')")
      await page.waitForURL(`${REDIRECT_URI}**`)
      expect(callbacks[0]!.searchParams.get("code")).toBeTruthy()
      expect(callbacks[0]!.searchParams.get("state")).toBe(state)
      expect(violations).toEqual([])
      await context.close()
    }
  }, 60_000)

  it("signs in and denies: back at the client with error=access_denied", async () => {
    const setup = await registerClient(server)
    const { url } = await authorizeUrl(setup)
    const { page, context, callbacks } = await open()
    await page.goto(url.href)
    await signIn(page)
    await page.click("button:has-text('Deny')")
    await page.waitForURL(`${REDIRECT_URI}**`)
    expect(callbacks[0]!.searchParams.get("error")).toBe("access_denied")
    expect(callbacks[0]!.searchParams.get("code")).toBeNull()
    await context.close()
  }, 30_000)

  it("shows a wrong password on the sign-in page, keeping the email", async () => {
    const setup = await registerClient(server)
    const { url } = await authorizeUrl(setup)
    const { page, context, callbacks } = await open("dark")
    await page.goto(url.href)
    await signIn(page, "not the password at all")
    await page.waitForSelector("text=Wrong email or password.")
    expect(await page.inputValue("#email")).toBe(server.user.email)
    await page.screenshot({ path: join(SHOTS, `wrong-password-dark.png`) })
    expect(callbacks).toEqual([])
    await context.close()
  }, 30_000)

  it("refuses a form whose CSRF token was tampered with", async () => {
    const setup = await registerClient(server)
    const { url } = await authorizeUrl(setup)
    const { page, context, callbacks } = await open()
    await page.goto(url.href)
    await page.locator("input[name=csrf]").evaluate((input) => ((input as unknown as { value: string }).value = "forged"))
    await page.fill("#email", server.user.email)
    await page.fill("#password", PASSWORD)
    const [response] = await Promise.all([
      page.waitForResponse((r) => r.request().method() === "POST"),
      page.click("button:has-text('Sign in')")
    ])
    expect(response.status()).toBe(403)
    expect(await page.locator("h1").textContent()).toBe("Request refused")
    expect(callbacks).toEqual([])
    await context.close()
  }, 30_000)

  it(
    "a user signed in through one account's client must sign in again at another account's, and gets only that account's data",
    async () => {
      const harbor = await server.addAccount("Harbor", "harbor@example.com")
      const harborService = await harbor.sandbox.post("/v1/services", { name: "Harbor tour", duration_minutes: 30 })
      expect(harborService.status).toBe(201)
      const studioClient = await registerClient(server)
      const harborClient = await registerClient({
        url: server.url,
        sandbox: harbor.sandbox,
        production: harbor.production,
        user: harbor.user
      })
      const { page, context, violations, callbacks } = await open()

      await page.goto((await authorizeUrl(studioClient)).url.href)
      await signIn(page)
      await page.click("button:has-text('Allow')")
      await page.waitForURL(`${REDIRECT_URI}**`)
      expect(callbacks).toHaveLength(1)

      // Signed in as Studio's user, at Harbor's client: the sign-in page, not a consent page.
      const { url, state, verifier } = await authorizeUrl(harborClient, { scope: "services:read" })
      await page.goto(url.href)
      expect(await page.locator("h1").textContent()).toBe("Sign in")
      expect(await page.locator("main").innerText()).not.toContain(server.user.email)
      await signIn(page, PASSWORD, harbor.user.email)
      await page.waitForSelector("text=Allow Acme Calendar Sync?")
      expect(await page.locator("main").innerText()).toContain(harbor.user.email)
      await page.click("button:has-text('Allow')")
      await page.waitForURL(`${REDIRECT_URI}**`)
      expect(callbacks).toHaveLength(2)

      const params = oauth.validateAuthResponse(harborClient.as, harborClient.client, callbacks[1]!, state)
      const tokens = await oauth.processAuthorizationCodeResponse(
        harborClient.as,
        harborClient.client,
        await oauth.authorizationCodeGrantRequest(
          harborClient.as,
          harborClient.client,
          harborClient.auth,
          params,
          REDIRECT_URI,
          verifier,
          insecure
        )
      )
      const services = await fetch(`${server.url}/v1/services`, { headers: { authorization: `Bearer ${tokens.access_token}` } })
      expect((await services.json()).data.map((s: { id: string }) => s.id)).toEqual([harborService.json.id])
      const grants = await harbor.sandbox.get("/v1/oauth-grants")
      expect(grants.json.data.map((g: { user_id: string }) => g.user_id)).toEqual([harbor.user.id])
      expect(violations).toEqual([])
      await context.close()
    },
    60_000
  )
})
