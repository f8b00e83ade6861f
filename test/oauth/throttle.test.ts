/** Sign-in is throttled per account and email, and per client address, against password guessing. */
import { afterAll, beforeAll, expect, it } from "vitest"
import { authorizeUrl, csrfOf, formAction, registerClient, UserAgent } from "./agent.js"
import { type OAuthTestServer, PASSWORD, startOAuthServer } from "./harness.js"

let server: OAuthTestServer
beforeAll(async () => {
  server = await startOAuthServer({ signInLimits: { perEmail: 3, perAddress: 5 } })
})
afterAll(() => server.close())

const attempt = async (email: string, password: string) => {
  const setup = await registerClient(server)
  const agent = new UserAgent(server.url)
  const { url } = await authorizeUrl(setup)
  const page = await agent.follow(await agent.request(url.href))
  const html = await page.response.text()
  const response = await agent.request(formAction(html, "Sign in"), { form: { csrf: csrfOf(html), email, password } })
  return { status: response.status, retryAfter: response.headers.get("retry-after"), html: await response.text() }
}

it("refuses the right password after too many wrong ones for that email, then throttles the address", async () => {
  for (let i = 0; i < 3; i++) expect((await attempt(server.user.email, "wrong password guess")).status).toBe(401)
  const blocked = await attempt(server.user.email.toUpperCase(), PASSWORD)
  expect(blocked.status).toBe(429)
  expect(Number(blocked.retryAfter)).toBeGreaterThan(0)
  expect(blocked.html).toContain("Too many attempts")
  // Another email from the same address: allowed until the address's own limit.
  expect((await attempt("someone@example.com", "wrong password guess")).status).toBe(401)
  expect((await attempt("someone-else@example.com", "wrong password guess")).status).toBe(429)
})
