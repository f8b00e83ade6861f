/**
 * The binary at the edges a new user meets: a port already taken, a misspelled database
 * URL, a PostgreSQL that is not there, a mistyped command or flag, an invalid environment
 * variable, `--help` on every command, progress while tables are migrated, and API keys
 * created, listed and revoked offline (a lost key is replaced, never shown again).
 */
import { type ChildProcess, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as net from "node:net"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { binary, client, expectStatus, killServers, serveProcess } from "./harness.js"

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "slotwise-http-cli-"))
beforeAll(() => binary().then(() => undefined), 120_000)
const children: Array<ChildProcess> = []
afterAll(() => {
  killServers()
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL")
  fs.rmSync(dir, { recursive: true, force: true })
})

interface Started {
  readonly child: ChildProcess
  readonly cwd: string
  readonly stdout: () => string
  readonly stderr: () => string
  /** Resolves once `stderr` or `stdout` satisfies `test` (rejects when the process exits first). */
  readonly until: (test: (output: { stdout: string; stderr: string }) => boolean) => Promise<void>
  readonly exited: Promise<number | null>
}

/** The binary in a directory of its own, without the storage and port variables unless `env` gives them. */
const start = async (args: ReadonlyArray<string>, env: Record<string, string> = {}): Promise<Started> => {
  const cwd = fs.mkdtempSync(path.join(dir, "run-"))
  const child = spawn(process.execPath, [await binary(), ...args], {
    cwd,
    env: { ...process.env, SLOTWISE_DATABASE_URL: "", SLOTWISE_PORT: "", SLOTWISE_ADMIN_TOKEN: "", ...env }
  })
  children.push(child)
  let stdout = ""
  let stderr = ""
  const waiting = new Set<() => void>()
  const check = () => {
    for (const w of waiting) w()
  }
  child.stdout!.setEncoding("utf8").on("data", (d: string) => ((stdout += d), check()))
  child.stderr!.setEncoding("utf8").on("data", (d: string) => ((stderr += d), check()))
  const exited = new Promise<number | null>((resolve) => child.once("close", (code) => (resolve(code), check())))
  let done = false
  void exited.then(() => (done = true))
  const until = (test: (output: { stdout: string; stderr: string }) => boolean) =>
    new Promise<void>((resolve, reject) => {
      const w = () => {
        if (test({ stdout, stderr })) {
          waiting.delete(w)
          resolve()
        } else if (done || child.exitCode !== null) {
          waiting.delete(w)
          reject(new Error(`exited before the condition: ${stdout}\n${stderr}`))
        }
      }
      waiting.add(w)
      w()
    })
  return { child, cwd, stdout: () => stdout, stderr: () => stderr, until, exited }
}

/** The binary run to completion: its exit code and output. */
const run = async (args: ReadonlyArray<string>, env: Record<string, string> = {}) => {
  const started = await start(args, env)
  const status = await started.exited
  return { status, stdout: started.stdout(), stderr: started.stderr() }
}

/** A port with a real listener on it, for as long as the test needs it taken. */
const takenPort = () =>
  new Promise<net.Server>((resolve) => {
    const server = net.createServer()
    server.listen(0, "127.0.0.1", () => resolve(server))
  })
const portOf = (server: net.Server) => (server.address() as net.AddressInfo).port
/** A port nothing listens on: taken by the system for a moment, then let go. */
const closedPort = async () => {
  const server = await takenPort()
  const port = portOf(server)
  await new Promise((resolve) => server.close(resolve))
  return port
}

const noStackTrace = (text: string) => {
  expect(text).not.toMatch(/^\s+at /m)
  expect(text).not.toContain("FiberFailure")
}

describe("slotwise serve, when it cannot start", { timeout: 150_000, concurrent: true }, () => {
  it("a port in use: says so at once, names --port and $SLOTWISE_PORT, reports no shutdown of a server that never started", async () => {
    const listener = await takenPort()
    try {
      const port = portOf(listener)
      const result = await run(["serve", "--memory", "--port", String(port)])
      expect(result.status).toBe(1)
      expect(result.stderr).toContain(`port ${port} on 127.0.0.1 is already in use`)
      expect(result.stderr).toContain("--port")
      expect(result.stderr).toContain("$SLOTWISE_PORT")
      expect(result.stdout).not.toContain("closed")
      noStackTrace(result.stderr)
    } finally {
      listener.close()
    }
  })

  it("a misspelled postgres:// scheme is refused with the right one, never taken as a SQLite file", async () => {
    const [flag, variable] = await Promise.all([
      start(["serve", "--port", "0", "--database", "postgress://postgres:hunter2@127.0.0.1/app"]),
      start(["accounts", "list"], { SLOTWISE_DATABASE_URL: "postgressql://127.0.0.1/app" })
    ])
    for (const [started, source] of [[flag, "--database"], [variable, "$SLOTWISE_DATABASE_URL"]] as const) {
      expect(await started.exited).toBe(2)
      expect(started.stderr()).toContain(`${source}: `)
      expect(started.stderr()).toMatch(/did you mean postgres(ql)?:\/\/\?/)
      expect(started.stderr()).not.toContain("hunter2")
      expect(fs.readdirSync(started.cwd)).toEqual([])
    }
  })

  it("an unreachable PostgreSQL: says at once that it cannot connect (host:port, error) and retries, then gives up with exit 1", async () => {
    const port = await closedPort()
    const url = `postgres://postgres@127.0.0.1:${port}/slotwise`
    // Waiting a minute: the first refusal is reported at once, not at the end.
    const patient = await start(["serve", "--port", "0", "--database", url], { SLOTWISE_DATABASE_WAIT_SECONDS: "60" })
    await patient.until(({ stderr }) => stderr.includes(`cannot connect to PostgreSQL at 127.0.0.1:${port}`))
    expect(patient.stderr()).toContain("ECONNREFUSED")
    expect(patient.stderr()).toContain("trying again for up to 60 s")
    patient.child.kill("SIGKILL")

    const brief = await run(["serve", "--port", "0", "--database", url, "--database-wait-seconds", "1"])
    expect(brief.status).toBe(1)
    const last = brief.stderr.trim().split("\n").at(-1)!
    expect(last).toContain(`slotwise: cannot connect to PostgreSQL at 127.0.0.1:${port}`)
    expect(last).toContain("--database-wait-seconds")
    expect(brief.stdout).not.toContain("storage closed")
    noStackTrace(brief.stderr)
  })
})

describe("slotwise serve's progress", { timeout: 150_000, concurrent: true }, () => {
  it("says on stderr that it migrates a new SQLite file's tables, and when that is done", async () => {
    const file = path.join(dir, "progress.db")
    const server = await start(["serve", "--port", "0", "--database", file])
    await server.until(({ stdout }) => stdout.includes("listening on"))
    expect(server.stderr()).toMatch(/migrating tables …\n.*tables migrated, done/)
    server.child.kill("SIGTERM")
    expect(await server.exited).toBe(0)
  })
})

describe("the command line's usage errors", { timeout: 150_000, concurrent: true }, () => {
  it("an unknown command points at the help that exists, with the nearest command; every command takes --help", async () => {
    const [seed, typo, subTypo, ...helps] = await Promise.all([
      run(["seed", "--help"]),
      run(["acounts", "list"]),
      run(["keys", "lst"]),
      ...[["keys", "--help"], ["keys", "create", "--help"], ["keys", "list", "--help"], ["keys", "revoke", "--help"], ["serve", "-h"], [
        "users",
        "create",
        "--help"
      ]]
        .map((args) => run(args))
    ])
    expect(seed.status).toBe(2)
    expect(seed.stderr).toContain("unknown command: seed")
    expect(seed.stderr).toContain("Run slotwise --help")
    expect(seed.stderr).not.toContain("slotwise seed --help")
    expect(typo.stderr).toContain("did you mean accounts?")
    expect(subTypo.stderr).toContain("did you mean keys list?")
    expect(subTypo.stderr).toContain("Run slotwise keys --help")
    for (const help of helps) {
      expect(help.status).toBe(0)
      expect(help.stdout).toContain("--")
    }
  })

  it("an unknown flag gets the nearest one; an invalid environment variable is named as such", async () => {
    const [prot, databse, usersTypo, fromEnv, fromFlag] = await Promise.all([
      run(["serve", "--prot", "8080"]),
      run(["accounts", "list", "--databse", "x.db"]),
      run(["users", "create", "--emial", "a@example.com"]),
      run(["serve"], { SLOTWISE_PORT: "abc" }),
      run(["serve", "--port", "abc"])
    ])
    expect(prot.status).toBe(2)
    expect(prot.stderr).toContain("unknown option --prot; did you mean --port?")
    expect(databse.stderr).toContain("did you mean --database?")
    expect(usersTypo.stderr).toContain("did you mean --email?")
    expect(fromEnv.status).toBe(2)
    expect(fromEnv.stderr).toContain("$SLOTWISE_PORT must be a port number")
    expect(fromEnv.stderr).not.toContain("--port must")
    expect(fromFlag.stderr).toContain("--port must be a port number")
  })
})

describe("slotwise keys", { timeout: 150_000, concurrent: true }, () => {
  it("create prints the secret once, list never shows it, revoke stops it at once; the server honours all three", async () => {
    const file = path.join(dir, "keys.db")
    const db = ["--database", file]
    const account = JSON.parse((await run(["accounts", "create", ...db, "--name", "Keys", "--plan", "pro", "--json"])).stdout).account.id
    const created = await run([
      "keys",
      "create",
      ...db,
      "--account",
      account,
      "--environment",
      "production",
      "--scopes",
      "bookings:read,clients:read"
    ])
    expect(created.stderr).toBe("")
    expect(created.status).toBe(0)
    const secret = /sk_live_\w+/.exec(created.stdout)?.[0]
    expect(secret).toBeDefined()
    const keyId = /key (key_\w+)/.exec(created.stdout)?.[1]
    expect(keyId).toBeDefined()

    const [listed, listedJson, missing, badEnv] = await Promise.all([
      run(["keys", "list", ...db, "--account", account]),
      run(["keys", "list", ...db, "--account", account, "--environment", "production", "--json"]),
      run(["keys", "create", ...db, "--account", "acc_01JZZZZZZZZZZZZZZZZZZZZZZZ"]),
      run(["keys", "create", ...db, "--account", account, "--environment", "live"])
    ])
    expect(listed.status).toBe(0)
    expect(listed.stdout).toContain(keyId)
    expect(listed.stdout).toContain("bookings:read,clients:read")
    expect(listedJson.stdout + listed.stdout).not.toContain(secret)
    expect(JSON.parse(listedJson.stdout).map((k: { id: string }) => k.id)).toContain(keyId)
    expect(missing.status).toBe(1)
    expect(missing.stderr).toContain("acc_01JZZZZZZZZZZZZZZZZZZZZZZZ")
    expect(badEnv.status).toBe(2)

    const server = await serveProcess(db)
    const api = client(server.url, secret)
    expectStatus(await api.get("/v1/clients"), 200)
    const revoked = await run(["keys", "revoke", keyId!, ...db])
    expect(revoked.status).toBe(0)
    expect(revoked.stdout).toContain(`Revoked production secret key ${keyId}`)
    // Another process revoked it: the server reads it again within its cache's life.
    const deadline = Date.now() + 30_000
    while ((await api.get("/v1/clients")).status !== 401) {
      expect(Date.now()).toBeLessThan(deadline)
      await new Promise((resolve) => setTimeout(resolve, 200))
    }
    const again = await run(["keys", "revoke", keyId!, ...db])
    expect(again.status).toBe(1)
    expect(again.stderr).toContain(`no API key ${keyId}`)
    server.process.kill("SIGTERM")
    expect((await server.exited).code).toBe(0)
  })
})
