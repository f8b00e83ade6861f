/**
 * OAuth through the real binary: `slotwise serve` on a SQLite file, a user made with
 * `slotwise users create`, a client registered through /v1, the whole authorization code
 * flow driven by oauth4webapi, then a restart and a second process on the same file.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as oauth from "oauth4webapi"
import { afterAll, describe, expect, it } from "vitest"
import { client, expectProblem, expectStatus } from "../http/harness.js"
import { discover, insecure, obtainTokens, type OAuthSite, registerClient } from "./agent.js"
import { PASSWORD } from "./harness.js"
import { cli, killAll, serve } from "./processes.js"

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "slotwise-oauth-serve-"))
afterAll(() => {
  killAll()
  fs.rmSync(dir, { recursive: true, force: true })
})

const bearer = (token: string) => ({ headers: { authorization: `Bearer ${token}` } })

describe("slotwise serve with OAuth", () => {
  it(
    "users create, a client through /v1, authorize with PKCE, /v1 with the token, refresh and revoke; state survives a restart and is shared by a second process",
    async () => {
      const database = path.join(dir, "serve.db")
      const first = await serve(["--database", database, "--admin-token", "admin-secret"])
      const accountId = first.lines.join("\n").match(/Created account (acc_\w+)/)?.[1]
      const secret = first.lines.join("\n").match(/sk_test_\w+/)?.[0]
      expect(accountId).toBeDefined()
      expect(secret).toBeDefined()

      // The password comes from standard input; on the command line it is refused.
      const [onArgv, created] = await Promise.all([
        cli(["users", "create", "--database", database, "--account", accountId!, "--email", "olive@example.com", "--password", PASSWORD]),
        cli(
          [
            "users",
            "create",
            "--database",
            database,
            "--account",
            accountId!,
            "--email",
            "olive@example.com",
            "--role",
            "owner",
            "--password-stdin",
            "--json"
          ],
          `${PASSWORD}\n`
        )
      ])
      expect(onArgv.status).toBe(2)
      expect(onArgv.stderr).toContain("--password")
      expect(created.stderr).not.toContain("slotwise:")
      expect(created.status).toBe(0)
      expect(JSON.parse(created.stdout)).toMatchObject({ account_id: accountId, email: "olive@example.com", role: "owner" })

      const site: OAuthSite = {
        url: first.url,
        sandbox: client(first.url, secret),
        production: client(first.url, secret),
        user: { email: "olive@example.com" }
      }
      const setup = await registerClient(site)
      expect(setup.as.issuer).toBe(first.url)
      expect(setup.as.token_endpoint).toBe(`${first.url}/oauth/token`)
      const { tokens, pages, headers } = await obtainTokens(site, setup)
      expect(pages).toEqual(["sign-in", "consent"])

      // The pages the real server serves carry the framing and content policies.
      for (const page of headers) {
        expect(page.get("content-type")).toMatch(/^text\/html/)
        expect(page.get("content-security-policy")).toContain("frame-ancestors 'none'")
        expect(page.get("content-security-policy")).toContain("default-src 'none'")
        expect(page.get("x-frame-options")).toBe("DENY")
        expect(page.get("cache-control")).toBe("no-store")
      }

      const services = await fetch(`${first.url}/v1/services`, bearer(tokens.access_token))
      expect(services.status).toBe(200)
      expect(services.headers.get("x-ratelimit-limit")).toBe("600")
      const outOfScope = await fetch(`${first.url}/v1/staff`, bearer(tokens.access_token))
      expect(outOfScope.status).toBe(403)

      const refreshed = await oauth.processRefreshTokenResponse(
        setup.as,
        setup.client,
        await oauth.refreshTokenGrantRequest(setup.as, setup.client, setup.auth, tokens.refresh_token!, insecure)
      )
      expect(refreshed.refresh_token).not.toBe(tokens.refresh_token)
      expect((await fetch(`${first.url}/v1/services`, bearer(refreshed.access_token))).status).toBe(200)

      // Restart on the same file: the refresh token issued before still works. A second
      // process on the same file, with its public URL, starts beside it.
      expect(await first.stop()).toBe(0)
      const [restarted, second] = await Promise.all([
        serve(["--database", database]),
        serve(["--database", database, "--public-url", "https://slotwise.example/"])
      ])
      expect([...restarted.lines, ...second.lines].some((l) => l.includes("sk_test_"))).toBe(false)
      const atRestarted = await discover(restarted.url)
      const again = await oauth.processRefreshTokenResponse(
        atRestarted,
        setup.client,
        await oauth.refreshTokenGrantRequest(atRestarted, setup.client, setup.auth, refreshed.refresh_token!, insecure)
      )
      expect((await fetch(`${restarted.url}/v1/services`, bearer(again.access_token))).status).toBe(200)

      // The second process's metadata names its public URL as the issuer, and it accepts the
      // access tokens the first process and the restarted one issued.
      const metadata = await (await fetch(`${second.url}/.well-known/oauth-authorization-server`)).json() as Record<string, unknown>
      expect(metadata.issuer).toBe("https://slotwise.example")
      expect(metadata.token_endpoint).toBe("https://slotwise.example/oauth/token")
      expect((await fetch(`${second.url}/v1/services`, bearer(refreshed.access_token))).status).toBe(200)
      expect((await fetch(`${second.url}/v1/services`, bearer(again.access_token))).status).toBe(200)
      // Revoked at one process, refused at the other; revoking the refresh token ends its whole grant.
      await oauth.processRevocationResponse(
        await oauth.revocationRequest(atRestarted, setup.client, setup.auth, again.refresh_token!, insecure)
      )
      expect((await fetch(`${second.url}/v1/services`, bearer(again.access_token))).status).toBe(401)
      const afterRevoke = await oauth.refreshTokenGrantRequest(atRestarted, setup.client, setup.auth, again.refresh_token!, insecure)
      expect(afterRevoke.status).toBe(400)
      expect(((await afterRevoke.json()) as { error: string }).error).toBe("invalid_grant")

      expect(await second.stop()).toBe(0)
      expect(await restarted.stop()).toBe(0)
    },
    240_000
  )

  it("the /v1 pipeline is unchanged beside OAuth: problems, authentication and rate limits", async () => {
    const database = path.join(dir, "limits.db")
    const limited = await cli([
      "accounts",
      "create",
      "--database",
      database,
      "--name",
      "Limited",
      "--plan",
      "free",
      "--rate-limit",
      "3",
      "--json"
    ])
    expect(limited.status).toBe(0)
    const key: string = JSON.parse(limited.stdout).keys.sandbox.secret
    const server = await serve(["--database", database, "--admin-token", "admin-secret"])
    const api = client(server.url, key)
    expectProblem(await client(server.url).get("/v1/services"), 401, "unauthorized")
    // Paths that only start like the OAuth ones are the API's.
    expectProblem(await api.get("/oauthx"), 404, "not_found")
    expectProblem(await api.get("/v1/oauth"), 404, "not_found")
    const replies = [await api.get("/v1/services"), await api.get("/v1/services")]
    for (const r of replies) expect(r.headers.get("x-ratelimit-limit")).toBe("3")
    const limit = expectProblem(await api.get("/v1/services"), 429, "rate_limited")
    expect(Number(replies[1]!.headers.get("x-ratelimit-remaining"))).toBe(0)
    expect(limit.status).toBe(429)
    expect(Number((await api.get("/v1/services")).headers.get("retry-after"))).toBeGreaterThan(0)
    // An unknown OAuth path is the authorization server's (JSON, not a problem document).
    const unknown = await fetch(`${server.url}/oauth/nothing`)
    expect(unknown.status).toBe(404)
    expect(expectStatus(await client(server.url).get("/health"), 200).status).toBe("ok")
    expect(await server.stop()).toBe(0)
  }, 120_000)
})
