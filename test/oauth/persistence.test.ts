/**
 * The authorization server's state lives in storage: on SQLite it survives a restart and is
 * shared by processes on one database (two servers here, one connection set each).
 */
import * as oauth from "oauth4webapi"
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, expect, it } from "vitest"
import { authorize, insecure, obtainTokens, registerClient, UserAgent } from "./agent.js"
import { startOAuthServer } from "./harness.js"

let dir: string
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "slotwise-oauth-persist-"))
})
afterAll(() => rmSync(dir, { recursive: true, force: true }))

it("tokens issued by one server work on another over the same database, and after a restart", async () => {
  const storage = { sqlite: join(dir, "db.sqlite") }
  const first = await startOAuthServer({ storage })
  const second = await startOAuthServer({ storage })
  try {
    const setup = await registerClient(first)
    const { tokens } = await obtainTokens(first, setup)
    const onSecond = await fetch(`${second.url}/v1/services`, { headers: { authorization: `Bearer ${tokens.access_token}` } })
    expect(onSecond.status).toBe(200)
    // The refresh at the other server: same records, same rotation.
    const atSecond = { ...setup.as, token_endpoint: `${second.url}/oauth/token` }
    const refreshed = await oauth.processRefreshTokenResponse(
      atSecond,
      setup.client,
      await oauth.refreshTokenGrantRequest(atSecond, setup.client, setup.auth, tokens.refresh_token!, insecure)
    )
    await first.close()
    await second.close()

    // At rest: no token and no client secret anywhere in the database files, only hashes.
    const files = readdirSync(dir).map((f) => readFileSync(join(dir, f)).toString("latin1")).join("\n")
    for (const secret of [tokens.access_token, tokens.refresh_token!, refreshed.access_token, refreshed.refresh_token!, setup.secret!]) {
      expect(files.includes(secret)).toBe(false)
    }
    expect(files.includes(setup.id)).toBe(true)

    const restarted = await startOAuthServer({ storage })
    try {
      const after = await fetch(`${restarted.url}/v1/services`, { headers: { authorization: `Bearer ${refreshed.access_token}` } })
      expect(after.status).toBe(200)
      const atRestarted = { ...setup.as, token_endpoint: `${restarted.url}/oauth/token` }
      const again = await oauth.refreshTokenGrantRequest(atRestarted, setup.client, setup.auth, refreshed.refresh_token!, insecure)
      expect(again.status).toBe(200)
    } finally {
      await restarted.close()
    }
  } finally {
    await first.close().catch(() => undefined)
    await second.close().catch(() => undefined)
  }
})

it("on SQLite, a consent once given is remembered and widened: the provider's records are its own copies", async () => {
  // SQLite hands every reader the same frozen value for a stored text; the provider changes
  // the grants it loads, so the adapter gives it copies. Without them the second
  // authorization (the grant loaded, then changed) failed with a 500.
  const server = await startOAuthServer({ storage: { sqlite: join(dir, "consent.sqlite") } })
  try {
    const setup = await registerClient(server)
    expect((await obtainTokens(server, setup)).pages).toEqual(["sign-in", "consent"])
    const again = await obtainTokens(server, setup, { agent: new UserAgent(server.url) })
    expect(again.pages).toEqual(["sign-in"])
    const more = await authorize(server, setup, { scope: "bookings:read services:read staff:read", agent: again.agent })
    expect(more.pages).toEqual(["consent"])
    const widened = await obtainTokens(server, setup, { scope: "bookings:read services:read staff:read", agent: more.agent })
    expect(widened.pages).toEqual([])
    expect((await fetch(`${server.url}/v1/staff`, { headers: { authorization: `Bearer ${widened.tokens.access_token}` } })).status).toBe(
      200
    )
  } finally {
    await server.close()
  }
})
