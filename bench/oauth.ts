/**
 * OAuth figures: GET /v1/bookings/{id} with an OAuth access token against the same call with
 * an API key (interleaved autocannon rounds, medians; target token ≥ 0.9× key), and the token
 * endpoint's requests/s for code exchanges and refreshes next to GET /health. One server in
 * this process on in-memory storage, loopback.
 *
 *   npx tsx bench/oauth.ts [seconds per round, default 3] [rounds, default 3]
 */
import * as oauth from "oauth4webapi"
import { createRequire } from "node:module"
import * as os from "node:os"
import { performance } from "node:perf_hooks"
import { authorize, insecure, obtainTokens, registerClient } from "../test/oauth/agent.js"
import { startOAuthServer } from "../test/oauth/harness.js"
import { MONDAY_9, seed } from "../test/http/harness.js"
import { interleaved, median } from "./rounds.js"

const autocannon = createRequire(import.meta.url)("autocannon") as (options: any) => Promise<any>
const SECONDS = Number(process.argv[2] ?? 3)
const ROUNDS = Number(process.argv[3] ?? 3)
const CONNECTIONS = 10

const server = await startOAuthServer()
try {
  await server.admin.patch(`/admin/v1/accounts/${server.account.account.id}`, { rate_limit_per_minute: 1_000_000 })
  const s = await seed(server.sandbox)
  const booking = await server.sandbox.post("/v1/bookings", {
    service_id: s.service.id,
    staff_id: s.staff.id,
    client_id: s.client.id,
    start: MONDAY_9
  })
  if (booking.status !== 201) throw new Error(`booking: ${booking.text}`)
  const setup = await registerClient(server)
  const { tokens } = await obtainTokens(server, setup, { scope: "bookings:read" })
  const key = server.account.keys.sandbox.secret
  const url = `${server.url}/v1/bookings/${booking.json.id}`

  const rps: Record<string, Array<number>> = { key: [], token: [] }
  const run = (name: "key" | "token", credential: string) => async () => {
    const result = await autocannon({
      url,
      duration: SECONDS,
      connections: CONNECTIONS,
      headers: { authorization: `Bearer ${credential}` }
    })
    if (result.non2xx > 0 || result.errors > 0) throw new Error(`${name}: ${result.non2xx} non-2xx, ${result.errors} errors`)
    rps[name]!.push(result.requests.average)
  }
  await run("key", key)() // warm-up, discarded
  rps.key = []
  await interleaved([run("key", key), run("token", tokens.access_token)], ROUNDS)
  const keyRps = median(rps.key!)
  const tokenRps = median(rps.token!)

  // The token endpoint: codes made first (sign-in and consent), then exchanged 4 at a time.
  const CODES = 40
  const codes = []
  for (let i = 0; i < CODES; i++) {
    const { callback, state, verifier } = await authorize(server, setup, { scope: "bookings:read" })
    codes.push({ params: oauth.validateAuthResponse(setup.as, setup.client, callback, state), verifier })
  }
  const refreshTokens: Array<string> = []
  const exchangeStart = performance.now()
  for (let i = 0; i < CODES; i += 4) {
    const batch = await Promise.all(
      codes.slice(i, i + 4).map(async ({ params, verifier }) => {
        const response = await oauth.authorizationCodeGrantRequest(
          setup.as,
          setup.client,
          setup.auth,
          params,
          setup.redirectUri,
          verifier,
          insecure
        )
        return oauth.processAuthorizationCodeResponse(setup.as, setup.client, response)
      })
    )
    for (const t of batch) refreshTokens.push(t.refresh_token!)
  }
  const exchangeRps = CODES / ((performance.now() - exchangeStart) / 1000)

  // Refreshes: 4 grants' chains side by side (each refresh needs the token the last one gave).
  let refreshes = 0
  const refreshStart = performance.now()
  const deadline = refreshStart + SECONDS * 1000
  await Promise.all(
    refreshTokens.slice(0, 4).map(async (first) => {
      let current = first
      while (performance.now() < deadline) {
        const response = await oauth.refreshTokenGrantRequest(setup.as, setup.client, setup.auth, current, insecure)
        current = (await oauth.processRefreshTokenResponse(setup.as, setup.client, response)).refresh_token!
        refreshes++
      }
    })
  )
  const refreshRps = refreshes / ((performance.now() - refreshStart) / 1000)

  const health = await autocannon({ url: `${server.url}/health`, duration: SECONDS, connections: 4 })

  console.log(`\nOAuth on loopback, one process, in-memory storage; ${os.cpus().length} cores, node ${process.version}`)
  console.log(`GET /v1/bookings/{id}: ${CONNECTIONS} connections, ${ROUNDS} interleaved rounds of ${SECONDS} s, medians`)
  console.log(`  API key        ${keyRps.toFixed(0).padStart(8)} req/s`)
  console.log(`  OAuth token    ${tokenRps.toFixed(0).padStart(8)} req/s   ${(tokenRps / keyRps).toFixed(2)}× the key (target ≥ 0.9×)`)
  console.log(`POST /oauth/token (4 at a time), next to GET /health (4 connections)`)
  console.log(`  code exchange  ${exchangeRps.toFixed(0).padStart(8)} req/s   (${CODES} codes)`)
  console.log(`  refresh        ${refreshRps.toFixed(0).padStart(8)} req/s   (${refreshes} rotations)`)
  console.log(`  GET /health    ${health.requests.average.toFixed(0).padStart(8)} req/s`)
} finally {
  await server.close()
}
