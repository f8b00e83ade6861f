/**
 * Servers the HTTP benchmarks start and load from outside: starting one, reading its CPU time
 * and memory from /proc, and the account, staff member and service a Slotwise server is
 * loaded with.
 */
import { type ChildProcess, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as readline from "node:readline"
import { call } from "./httpCall.js"

/** The heap caps the `slotwise` bin starts node with (bin/slotwise.js), given to every server measured. */
export const BIN_CAPS = ["--max-semi-space-size=16", "--max-old-space-size=128"] as const

/** Node flags written in one variable (`BENCH_CAPS`, `BENCH_FLAGS_A`), space-separated; none when unset. */
export const nodeFlags = (written: string | undefined): Array<string> => (written ?? "").split(" ").filter((flag) => flag !== "")

export interface StartedServer {
  readonly url: string
  readonly pid: number
  readonly child: ChildProcess
  /** From spawn to the line that names the port, in ms. */
  readonly readyMs: number
}

/**
 * Starts `command args` in `cwd` (node itself by default) and resolves once it prints
 * `port N` or `listening on URL`; the process is added to `children` (to be killed on exit).
 */
export const startServer = (
  args: ReadonlyArray<string>,
  options: { readonly cwd: string; readonly children: Array<ChildProcess>; readonly command?: string }
): Promise<StartedServer> =>
  new Promise((resolve, reject) => {
    const t0 = performance.now()
    const child = spawn(options.command ?? process.execPath, args, { cwd: options.cwd, stdio: ["ignore", "pipe", "inherit"] })
    options.children.push(child)
    readline.createInterface({ input: child.stdout! }).on("line", (line) => {
      const port = /^port (\d+)$/.exec(line)
      const listening = /^listening on (http:\/\/\S+)$/.exec(line)
      const url = port ? `http://127.0.0.1:${port[1]}` : listening?.[1]
      if (url !== undefined) resolve({ url, pid: child.pid!, child, readyMs: performance.now() - t0 })
    })
    child.on("exit", (code) => reject(new Error(`${args.join(" ")} exited ${code}`)))
  })

const cpuOfStat = (file: string): number => {
  const fields = fs.readFileSync(file, "utf8").split(") ")[1]!.split(" ")
  return (Number(fields[11]) + Number(fields[12])) * 10_000
}

/** CPU time (user + system, all threads) a process has used so far, in µs; 10 ms resolution. */
export const cpuOf = (pid: number): number => cpuOfStat(`/proc/${pid}/stat`)

/**
 * CPU time of a process's main thread alone (JavaScript, and SQLite's statements, which run on
 * it), in µs: what bounds a node server's requests per second, where `cpuOf` also counts the
 * garbage collector's helper threads and the checkpoint worker.
 */
export const mainThreadCpuOf = (pid: number): number => cpuOfStat(`/proc/${pid}/task/${pid}/stat`)

/** A process's resident memory now, in MB. */
export const rssOf = (pid: number): number => Number(/VmRSS:\s+(\d+)/.exec(fs.readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? 0) / 1024

const DAY = 86_400_000
/** Midnight UTC the day after tomorrow: every slot from it is in the future. */
export const FIRST_DAY = Math.ceil(Date.now() / DAY) * DAY + DAY
/** The `i`-th half hour from `FIRST_DAY`, as the API writes times. */
export const halfHour = (i: number): string => new Date(FIRST_DAY + i * 30 * 60_000).toISOString().replace(".000Z", "Z")

/** An account on the `business` plan whose rate limit no benchmark reaches; its sandbox secret key. */
export const benchAccount = async (url: string, adminToken: string): Promise<string> => {
  const created = await call(`${url}/admin/v1/accounts`, "POST", adminToken, {
    name: "Bench",
    plan: "business",
    rate_limit_per_minute: 1_000_000
  })
  return created.keys.sandbox.secret
}

/** A staff member in UTC bookable every hour of every day, with a 30-minute service of their own, bookable five years ahead. */
export const bookable = async (url: string, key: string, staffName: string, serviceName: string) => {
  const staff = await call(`${url}/v1/staff`, "POST", key, { name: staffName, time_zone: "UTC" })
  const service = await call(`${url}/v1/services`, "POST", key, {
    name: serviceName,
    duration_minutes: 30,
    staff_ids: [staff.id],
    max_advance_days: 1830
  })
  await call(`${url}/v1/availability`, "POST", key, {
    staff_id: staff.id,
    type: "weekly",
    weekdays: [1, 2, 3, 4, 5, 6, 7],
    start_time: "00:00",
    end_time: "24:00"
  })
  return { staff: staff.id as string, service: service.id as string }
}

/**
 * autocannon's options for creates on `url`: `POST /v1/bookings` for the staff member, service
 * and client in `ids`, each request at the next half hour from `first`, so none is refused
 * for a taken slot. Options reused (more connections, later rounds) go on from the same slot.
 */
export const createsAt = (
  url: string,
  ids: { readonly service: string; readonly staff: string; readonly client: string },
  first: number
) => {
  let next = first
  return {
    url: `${url}/v1/bookings`,
    method: "POST",
    headers: { "content-type": "application/json" },
    requests: [{
      setupRequest: (req: any) => ({
        ...req,
        body: JSON.stringify({ service_id: ids.service, staff_id: ids.staff, client_id: ids.client, start: halfHour(next++) })
      })
    }]
  }
}
