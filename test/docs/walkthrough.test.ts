/**
 * The README's curl walk-through, run as written (twice, as a reader may) against a real
 * `slotwise serve` on 127.0.0.1, so the documented commands stay true. It needs curl, jq and
 * bash, which the README lists with it.
 */
import { type ChildProcess, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import * as readline from "node:readline"
import { fileURLToPath } from "node:url"
import { afterAll, describe, expect, it } from "vitest"
import { binary } from "../http/harness.js"
import { runBash, walkthrough } from "./shell.js"

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..")
const children: Array<ChildProcess> = []
afterAll(() => {
  for (const c of children) if (c.exitCode === null) c.kill("SIGKILL")
})

const serve = async (): Promise<{ url: string; key: string }> => {
  const entry = await binary()
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [entry, "serve", "--port", "0", "--memory"], {
      cwd: root,
      stdio: ["ignore", "pipe", "pipe"]
    })
    children.push(child)
    let key: string | undefined
    let stderr = ""
    child.stderr!.on("data", (d) => (stderr += String(d)))
    child.on("exit", (code) => reject(new Error(`server exited (${code}) before listening: ${stderr}`)))
    readline.createInterface({ input: child.stdout! }).on("line", (line) => {
      key ??= /sandbox secret key\s+(sk_test_\w+)/.exec(line)?.[1]
      const listening = /^listening on (http:\/\/\S+)$/.exec(line)
      if (listening && key !== undefined) resolve({ url: listening[1]!, key })
    })
  })
}

describe("README walk-through", () => {
  it("stops at the first failed request with the server's problem, and runs nothing after it", async () => {
    const { url } = await serve()
    // Plain bash, as a pasted block runs: the block itself must stop at the failure.
    const result = runBash(walkthrough(), { KEY: "sk_test_notakey", BASE: url }, { strict: false })
    expect(result.status).not.toBe(0)
    expect(result.stdout).toBe("")
    // curl's own line ("curl: (22) …") and the problem the server sent.
    const problem = JSON.parse(result.stderr.split("\n").find((line) => line.startsWith("{"))!)
    expect(problem).toMatchObject({ status: 401, code: "unauthorized" })
    expect(result.stderr).not.toContain("null")
  })

  it("books the first free slot each time it is run, and exchanges the key for a live one", async () => {
    const { key, url } = await serve()
    const script = walkthrough()
    for (const run of [1, 2]) {
      const result = runBash(script, { KEY: key, BASE: url })
      expect(result.stderr, `run ${run}`).toBe("")
      expect(result.status, `run ${run}`).toBe(0)
      const lines = result.stdout.trim().split("\n")
      expect(lines[0]).toBe(`{"object":"list","has_more":false}`)
      const booking = JSON.parse(lines.find((l) => l.includes("bkg_"))!)
      expect(booking).toMatchObject({ status: "confirmed", id: expect.stringMatching(/^bkg_/) })
      expect(booking.start).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:00Z$/)
      expect(lines.at(-1)).toBe("sk_live_")
    }
    // The booking page the README sends the reader to next offers the service.
    const bookingPage = /open\s+`http:\/\/127\.0\.0\.1:8080(\/book\/[^`]+)`/.exec(fs.readFileSync(path.join(root, "README.md"), "utf8"))
    expect(bookingPage, "the README names the booking page").not.toBeNull()
    const page = await fetch(`${url}${bookingPage![1]}`)
    expect(page.status).toBe(200)
    expect(await page.text()).toContain("Haircut")
  })
})
