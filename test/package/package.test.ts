/**
 * The package as users get it and start it: the README's install commands (`npm pack` in the
 * checkout, `npm install` of the tarball beside `effect@3` in an app) give an empty project the
 * package, which runs a JavaScript example and type-checks the README's Effect example against
 * the lowest supported `effect`; and the server started the
 * documented ways (`npm start`, `npx slotwise serve`) stops cleanly when the npm process is
 * signalled, finishing a request in flight, releasing its port and leaving no process behind.
 * Packing and `npm start` would both build dist/ when it is stale: it is built once first,
 * then the tests run at the same time (the install waits on the disk, the servers on the CPU).
 */
import { type ChildProcess, execFile, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as http from "node:http"
import * as net from "node:net"
import * as os from "node:os"
import * as path from "node:path"
import * as readline from "node:readline"
import { fileURLToPath } from "node:url"
import { promisify } from "node:util"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { readmeBlock } from "../docs/shell.js"

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..")
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "slotwise-package-"))
const execute = promisify(execFile)
const started: Array<ChildProcess> = []
// The installed project is thousands of files: removing them takes a while on a busy disk.
afterAll(async () => {
  for (const child of started) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL")
  await fs.promises.rm(dir, { recursive: true, force: true })
}, 120_000)

// What `npm pack` (the prepare script) and `npm start` (bin/slotwise.js) would otherwise both do.
beforeAll(() => execute(process.execPath, [path.join(root, "bin", "prepare.js")], { cwd: root }), 180_000)

const pkg = JSON.parse(fs.readFileSync(path.join(root, "package.json"), "utf8"))
/** The lowest `effect` the package supports, from its peer range (`>=3.22.4 <4`). */
const supportedEffect = /^>=(\S+) <4$/.exec(pkg.peerDependencies.effect)?.[1]

/** Waits for `condition` (polled), failing after `ms`. */
const until = async (what: string, condition: () => boolean | Promise<boolean>, ms = 30_000) => {
  const deadline = Date.now() + ms
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setImmediate(resolve))
  }
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code !== "ESRCH"
  }
}

const portOpen = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = net.connect(port, "127.0.0.1")
    socket.once("connect", () => {
      socket.destroy()
      resolve(true)
    })
    socket.once("error", () => resolve(false))
  })

/** The README's two install commands (`npm pack` in the checkout, `npm install …tgz` in the app), without their comments. */
const readmeInstall = () => {
  const commands = readmeBlock("install-library").split("\n").map((line) => line.replace(/\s+#.*$/, "").trim()).filter((line) =>
    line !== ""
  )
  return { pack: commands.find((c) => c.startsWith("npm pack")), install: commands.find((c) => c.startsWith("npm install")) }
}

/** Runs a README command in bash, npm configured through `npm_config_*` variables. */
const runCommand = (command: string, cwd: string, npmConfig: Record<string, string>) =>
  execute("bash", ["--noprofile", "--norc", "-euo", "pipefail", "-c", command], {
    cwd,
    maxBuffer: 64 << 20,
    env: { ...process.env, ...Object.fromEntries(Object.entries(npmConfig).map(([k, v]) => [`npm_config_${k}`, v])) }
  })

describe("npm pack", { timeout: 300_000, concurrent: true }, () => {
  it("the README's install commands: a JavaScript example books, the Effect example type-checks against the lowest supported effect", async () => {
    expect(supportedEffect).toMatch(/^3\.\d+\.\d+$/)
    const { pack, install } = readmeInstall()
    expect(pack).toBe("npm pack")
    const tarballName = `${pkg.name}-${pkg.version}.tgz`
    expect(install).toBe(`npm install /path/to/slotwise/${tarballName} effect@3`)
    // As written; the tarball goes to this run's folder and npm answers in JSON (its config, not the command).
    const packed = await runCommand(pack!, root, { pack_destination: dir, json: "true" })
    expect(JSON.parse(packed.stdout)[0].filename).toBe(tarballName)
    const project = path.join(dir, "app")
    fs.mkdirSync(project)
    fs.writeFileSync(path.join(project, "package.json"), JSON.stringify({ name: "app", private: true, type: "module" }))
    // No install scripts: better-sqlite3's native build is minutes of compiling and the
    // examples run in memory (it loads its binding only when a database is opened).
    const quick = { audit: "false", fund: "false", prefer_offline: "true", ignore_scripts: "true" }
    await runCommand(install!.replace("/path/to/slotwise/", `${dir}/`), project, quick)
    const installed = (name: string) => JSON.parse(fs.readFileSync(path.join(project, "node_modules", name, "package.json"), "utf8"))
    expect(installed("slotwise").version).toBe(pkg.version)
    expect(installed("effect").version).toMatch(/^3\./)
    // Then the lowest effect the peer range admits, which the examples below must work with.
    await runCommand(`npm install effect@${supportedEffect}`, project, quick)
    expect(installed("effect").version).toBe(supportedEffect)
    // One effect in the tree: the package uses the application's, not a copy of its own.
    expect(fs.existsSync(path.join(project, "node_modules", "slotwise", "node_modules", "effect"))).toBe(false)
    // The browser widget ships bundled (`slotwise serve` answers /widget.js from it), without its sources.
    const shipped: ReadonlyArray<string> = JSON.parse(packed.stdout)[0].files.map((f: { path: string }) => f.path)
    expect(shipped).toContain("dist/widget.js")
    expect(shipped.filter((f) => f.startsWith("widget/"))).toEqual([])

    fs.writeFileSync(
      path.join(project, "book.mjs"),
      `import { createScheduling, SlotUnavailableError } from "slotwise"
const s = await createScheduling()
const ana = await s.staff.create({ name: "Ana", time_zone: "Europe/Berlin" })
await s.availability.create({ staff_id: ana.id, type: "weekly", weekdays: [1, 2, 3, 4, 5], start_time: "09:00", end_time: "17:00" })
const cut = await s.services.create({ name: "Haircut", duration_minutes: 30, staff_ids: [ana.id] })
const { data } = await s.availability.slots({ service_id: cut.id, start: "2027-03-29T00:00:00Z", end: "2027-04-05T00:00:00Z" })
const booking = await s.bookings.create({ service_id: cut.id, staff_id: ana.id, start: data[0].start, client: { name: "Bo" } })
try {
  await s.bookings.create({ service_id: cut.id, staff_id: ana.id, start: data[0].start, client: { name: "Late" } })
} catch (error) {
  if (!(error instanceof SlotUnavailableError)) throw error
  console.log("refused", error.code)
}
console.log("booked", booking.id, booking.start, booking.status)
await s.close()
`
    )
    // docs/library.md's Effect example, type-checked with the repository's TypeScript against
    // the project's own node_modules (the package's types and the installed effect).
    fs.writeFileSync(
      path.join(project, "effect-example.ts"),
      `import { Bookings, Layers, Storage } from "slotwise/core"
import { SqliteStorageLive } from "slotwise"
import * as Modules from "slotwise/modules"
import { Effect, Layer } from "effect"

const program = Effect.flatMap(Bookings.Bookings, (bookings) => bookings.list({ status: "confirmed", limit: 10 }))
export type Create = typeof Bookings.BookingCreate.Encoded
export const sameBookings: typeof Bookings = Modules.Bookings
export const run: Promise<{ readonly data: ReadonlyArray<{ readonly id: string }> }> = program.pipe(
  Effect.provide(Layers.CoreLive.pipe(Layer.provide(SqliteStorageLive({ filename: "app.db" })))),
  Effect.provideService(Storage.Tenant, { account_id: "acc_…", environment: "sandbox" }),
  Effect.runPromise
)
`
    )
    fs.writeFileSync(
      path.join(project, "tsconfig.json"),
      JSON.stringify({
        compilerOptions: {
          target: "ES2022",
          module: "NodeNext",
          moduleResolution: "NodeNext",
          strict: true,
          noEmit: true,
          skipLibCheck: true,
          types: []
        },
        files: ["effect-example.ts"]
      })
    )
    const tsc = path.join(root, "node_modules", "typescript", "bin", "tsc")
    // Run side by side: neither writes anything the other reads.
    const [booked, checked] = await Promise.all([
      execute(process.execPath, ["book.mjs"], { cwd: project }),
      execute(process.execPath, [tsc, "-p", "tsconfig.json"], { cwd: project }).catch((e: { stdout: string }) => e)
    ])
    expect(booked.stdout).toMatch(/^booked bkg_\w{26} 2027-03-29T07:00:00Z confirmed$/m)
    expect(booked.stdout).toContain("refused slot_unavailable")
    expect(checked.stdout).toBe("")
  })
})

interface Launched {
  readonly child: ChildProcess
  readonly lines: Array<string>
  readonly url: string
  readonly port: number
  /** The server's node process (it prints its pid), not npm's. */
  readonly serverPid: number
  readonly exited: Promise<unknown>
}

/** Runs `command args` in the repository as a user would, until it prints "listening on". */
const launch = (command: string, args: ReadonlyArray<string>): Promise<Launched> =>
  new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      cwd: root,
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env, SLOTWISE_ADMIN_TOKEN: "", SLOTWISE_DATABASE_URL: "" }
    })
    started.push(child)
    const lines: Array<string> = []
    let stderr = ""
    child.stderr!.on("data", (d) => (stderr += String(d)))
    const exited = new Promise((r) => child.on("exit", r))
    readline.createInterface({ input: child.stdout! }).on("line", (line) => {
      lines.push(line)
      const url = /^listening on (http:\/\/\S+)$/.exec(line)?.[1]
      const pid = lines.map((l) => /^slotwise \S+ \(pid (\d+)\)/.exec(l)?.[1]).find((p) => p !== undefined)
      if (url !== undefined && pid !== undefined)
        resolve({ child, lines, url, port: Number(new URL(url).port), serverPid: Number(pid), exited })
    })
    void exited.then(() => reject(new Error(`${command} ${args.join(" ")} exited before listening: ${stderr}`)))
  })

/** Stops `launched` with `signal` sent to npm's process; the server must be gone and its port free. */
const expectStopped = async (launched: Launched) => {
  await launched.exited
  await until("the server process to exit", () => !alive(launched.serverPid))
  expect(await portOpen(launched.port)).toBe(false)
  await until("the last shutdown line", () => launched.lines.includes("storage closed; exiting"))
}

/**
 * A POST whose headers the server has taken (it answered `100 Continue`) and whose body is
 * sent when `finish` is called: a request in flight for as long as the test wants.
 */
const requestInFlight = (url: string, key: string) =>
  new Promise<{ readonly finish: () => Promise<{ status: number; body: string }> }>((resolve, reject) => {
    const body = JSON.stringify({ name: "Late cut", duration_minutes: 30 })
    const req = http.request(`${url}/v1/services`, {
      method: "POST",
      agent: false,
      headers: {
        authorization: `Bearer ${key}`,
        "content-type": "application/json",
        "content-length": Buffer.byteLength(body),
        expect: "100-continue",
        connection: "close"
      }
    })
    const response = new Promise<{ status: number; body: string }>((done, failed) => {
      req.on("response", (res) => {
        let text = ""
        res.on("data", (d) => (text += String(d)))
        res.on("end", () => done({ status: res.statusCode!, body: text }))
      })
      req.on("error", failed)
    })
    req.on("error", reject)
    req.on("continue", () =>
      resolve({
        finish: () => {
          req.end(body)
          return response
        }
      }))
    req.flushHeaders()
  })

describe("stopping the server started through npm", { timeout: 240_000, concurrent: true }, () => {
  it("npm start, SIGTERM to npm: the request in flight completes, then the port is released and no process is left", async () => {
    const server = await launch("npm", ["start", "--", "--port", "0", "--memory"])
    const key = server.lines.find((l) => l.includes("sandbox secret key"))?.match(/sk_test_\w+/)?.[0]
    expect(key).toBeDefined()
    const inFlight = await requestInFlight(server.url, key!)
    server.child.kill("SIGTERM")
    await until("the server to log the signal", () => server.lines.some((l) => l.startsWith("received SIGTERM")))
    const reply = await inFlight.finish()
    expect(reply.status).toBe(201)
    expect(JSON.parse(reply.body)).toMatchObject({ object: "service", name: "Late cut" })
    await expectStopped(server)
  })

  it("npm start, SIGINT to npm: the server stops and releases its port", async () => {
    const server = await launch("npm", ["start", "--", "--port", "0", "--memory"])
    server.child.kill("SIGINT")
    await expectStopped(server)
    expect(server.lines.some((l) => l.startsWith("received SIGINT"))).toBe(true)
  })

  it("npx slotwise serve, SIGTERM to npx: the server stops and releases its port", async () => {
    const server = await launch("npx", ["--no-install", "slotwise", "serve", "--port", "0", "--memory"])
    server.child.kill("SIGTERM")
    await expectStopped(server)
  })
})
