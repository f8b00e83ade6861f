/**
 * What the binary loads before it listens: a server on in-memory storage starts without the
 * SQLite driver, and the bundle's stand-ins (bin/bundle-options.js) load the WebSocket
 * library and the MIME table only when one of their exports is first used, and then answer
 * as the real modules do.
 */
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as readline from "node:readline"
import { afterAll, describe, expect, it } from "vitest"
import { bundled } from "./bundle.js"
import { binary } from "./harness.js"

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "slotwise-http-startup-"))
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))

/**
 * `slotwise serve --port 0 …args` with Node's module loader tracing on (NODE_DEBUG=module
 * names every CommonJS module it loads, on stderr); resolved with that trace once the server
 * answers `GET /health`, then stopped.
 */
const traceStart = async (args: ReadonlyArray<string>): Promise<string> => {
  const child = spawn(process.execPath, [await binary(), "serve", "--port", "0", ...args], {
    cwd: dir,
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, NODE_DEBUG: "module", SLOTWISE_DATABASE_URL: "", SLOTWISE_ADMIN_TOKEN: "" }
  })
  let trace = ""
  child.stderr.setEncoding("utf8").on("data", (d: string) => (trace += d))
  const exited = new Promise((resolve) => child.once("exit", resolve))
  try {
    const url = await new Promise<string>((resolve, reject) => {
      readline.createInterface({ input: child.stdout }).on("line", (line) => {
        const listening = /^listening on (http:\/\/\S+)$/.exec(line)
        if (listening) resolve(listening[1]!)
      })
      void exited.then((code) => reject(new Error(`server exited (${code}) before listening: ${trace.slice(-2000)}`)))
    })
    expect((await fetch(`${url}/health`)).status).toBe(200)
    return trace
  } finally {
    child.kill("SIGTERM")
    await exited
  }
}

describe("start-up", { timeout: 120_000, concurrent: true }, () => {
  it("a memory server starts and answers without loading the SQLite driver; a SQLite server loads it", async () => {
    const [memory, sqlite] = await Promise.all([traceStart(["--memory"]), traceStart(["--database", path.join(dir, "start.db")])])
    expect(memory).not.toContain("node_modules/better-sqlite3/")
    expect(sqlite).toContain("node_modules/better-sqlite3/")
  })

  it("the bundle loads ws and mime on first use, and they then work as the real modules", async () => {
    const entry = await bundled("test/http/fixtures/lazyModules.mjs")
    const child = spawn(process.execPath, [entry], { stdio: ["ignore", "pipe", "inherit"] })
    let out = ""
    child.stdout.setEncoding("utf8").on("data", (d: string) => (out += d))
    const code = await new Promise((resolve) => child.once("close", resolve))
    expect(code).toBe(0)
    expect(JSON.parse(out)).toEqual({ before: [], after: ["ws", "mime"], server: true, type: "application/json" })
  })
})
