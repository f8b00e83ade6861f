/**
 * docs/oauth.md's curl sign-in (the block after `<!-- oauth-curl-sign-in -->`), run as written
 * against a real `slotwise serve --memory`: the first time through the consent page, the second
 * time with consent remembered (signing in leads straight to the callback); each code is
 * exchanged for tokens that work on /v1. It needs curl and bash, which the page uses.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { createHash, randomBytes } from "node:crypto"
import * as fs from "node:fs"
import * as path from "node:path"
import * as readline from "node:readline"
import { fileURLToPath } from "node:url"
import { afterAll, describe, expect, it } from "vitest"
import { binary, client } from "../http/harness.js"
import { runBash } from "./shell.js"

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..")
const children: Array<ChildProcess> = []
afterAll(() => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill("SIGKILL")
})

const REDIRECT_URI = "http://127.0.0.1:9000/callback"

/** The shell block that follows the `<!-- oauth-curl-sign-in -->` marker. */
const signInBlock = (): string => {
  const page = fs.readFileSync(path.join(root, "docs/oauth.md"), "utf8")
  const block = /<!-- oauth-curl-sign-in -->\s*```sh\n([\s\S]*?)```/.exec(page)
  if (block === null) throw new Error("docs/oauth.md has no block after <!-- oauth-curl-sign-in -->")
  return block[1]!
}

/** The page's user and password, as the block signs in with them. */
const credentialsOf = (block: string) => ({
  email: /email=(\S+@\S+?) /.exec(block)![1]!,
  password: /'password=([^']+)'/.exec(block)![1]!
})

const serve = async (): Promise<{ url: string; key: string; accountId: string }> => {
  const entry = await binary()
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [entry, "serve", "--port", "0", "--memory", "--admin-token", "admin-secret"], {
      cwd: root,
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env, SLOTWISE_ADMIN_TOKEN: "", SLOTWISE_PUBLIC_URL: "" }
    })
    children.push(child)
    let key: string | undefined
    let accountId: string | undefined
    let stderr = ""
    child.stderr!.on("data", (d) => (stderr += String(d)))
    child.on("exit", (code) => reject(new Error(`server exited (${code}) before listening: ${stderr}`)))
    readline.createInterface({ input: child.stdout! }).on("line", (line) => {
      accountId ??= /Created account (acc_\w+)/.exec(line)?.[1]
      key ??= /sandbox secret key\s+(sk_test_\w+)/.exec(line)?.[1]
      const listening = /^listening on (http:\/\/\S+)$/.exec(line)
      if (listening && key !== undefined && accountId !== undefined) resolve({ url: listening[1]!, key, accountId })
    })
  })
}

describe("docs/oauth.md curl sign-in", () => {
  it("gets a code with consent, then again with consent remembered, and each code gives working tokens", async () => {
    const block = signInBlock()
    const { email, password } = credentialsOf(block)
    const { url, key, accountId } = await serve()
    const admin = client(url, "admin-secret")
    const api = client(url, key)
    expect((await admin.post(`/admin/v1/accounts/${accountId}/users`, { email, name: "Olive", password, role: "owner" })).status).toBe(201)
    const created = await api.post("/v1/oauth-clients", {
      name: "Acme Calendar Sync",
      type: "confidential",
      redirect_uris: [REDIRECT_URI],
      scopes: ["bookings:read", "services:read"]
    })
    expect(created.status).toBe(201)
    const basic = `Basic ${Buffer.from(`${created.json.client_id}:${created.json.client_secret}`).toString("base64")}`

    const grantIds: Array<string> = []
    for (const run of [1, 2]) {
      const verifier = randomBytes(48).toString("base64url")
      const challenge = createHash("sha256").update(verifier).digest("base64url")
      const authorize = `${url}/oauth/authorize?response_type=code&client_id=${created.json.client_id}` +
        `&redirect_uri=${encodeURIComponent(REDIRECT_URI)}&scope=bookings%3Aread%20services%3Aread&state=xyz` +
        `&code_challenge=${challenge}&code_challenge_method=S256`
      const result = runBash(`${block}\necho "CODE=$CODE"`, { BASE: url, AUTHORIZE: authorize })
      expect(result.stderr, `run ${run}`).toBe("")
      expect(result.status, `run ${run}`).toBe(0)
      const [printed, codeLine] = result.stdout.trim().split("\n").slice(-2)
      const callback = new URL(printed!)
      expect(`${callback.origin}${callback.pathname}`).toBe(REDIRECT_URI)
      expect(callback.searchParams.get("state")).toBe("xyz")
      const code = callback.searchParams.get("code")!
      expect(codeLine).toBe(`CODE=${code}`)

      const exchanged = await fetch(`${url}/oauth/token`, {
        method: "POST",
        headers: { authorization: basic, "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({ grant_type: "authorization_code", code, redirect_uri: REDIRECT_URI, code_verifier: verifier })
          .toString()
      })
      expect(exchanged.status, `run ${run}`).toBe(200)
      const tokens = await exchanged.json() as { access_token: string; scope: string }
      expect(tokens.scope.split(" ").sort()).toEqual(["bookings:read", "services:read"])
      expect((await fetch(`${url}/v1/services`, { headers: { authorization: `Bearer ${tokens.access_token}` } })).status).toBe(200)
      const grants = await api.get("/v1/oauth-grants")
      grantIds.push(...grants.json.data.map((g: { id: string }) => g.id))
    }
    // One grant, given on the first run and remembered on the second (no consent page then).
    expect(new Set(grantIds).size).toBe(1)
    expect(grantIds).toHaveLength(2)
  }, 120_000)
})
