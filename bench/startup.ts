/**
 * Start-up: how long `node bin/slotwise.js serve --memory --port 0` (with the bin's heap caps,
 * as `npm start` runs it) takes from spawn to its `listening on` line, and to the answer of
 * its first request (GET /v1/services with the key printed at start), against a bare Node
 * start in the same rounds (`http.createServer().listen(0)`, then the same line), so the
 * figures stay comparable on a busy machine; also the CPU time (all threads) each process had
 * used when it said it listens, which a busy machine stretches much less than wall time.
 * Each round starts every contestant once, the order turning; medians (and 90th percentiles
 * of wall time) over rounds.
 *
 *   npx tsx bench/startup.ts [rounds, default 10] [checkout …]
 *
 * With checkouts named (each with its node_modules and a built dist/: run its bin once),
 * their servers are started in the same rounds: a before/after comparison under one load.
 */
import type { ChildProcess } from "node:child_process"
import { spawn } from "node:child_process"
import * as os from "node:os"
import * as path from "node:path"
import { performance } from "node:perf_hooks"
import * as readline from "node:readline"
import { fileURLToPath } from "node:url"
import { median } from "./rounds.js"
import { BIN_CAPS, cpuOf } from "./servers.js"

const ROUNDS = Number(process.argv[2] ?? 10)
const here = path.join(path.dirname(fileURLToPath(import.meta.url)), "..")
const checkouts = process.argv.length > 3 ? process.argv.slice(3).map((dir) => path.resolve(dir)) : [here]

const BARE =
  "const s = require('http').createServer(); s.listen(0, '127.0.0.1', () => console.log('listening on http://127.0.0.1:' + s.address().port))"

interface Start {
  readonly listeningMs: number
  /** CPU time (user + system, all threads) the process had used when it said it listens: steadier than wall time on a busy machine. */
  readonly cpuMs: number
  readonly firstAnswerMs?: number
}

const stop = (child: ChildProcess) =>
  new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve()
    child.once("exit", () => resolve())
    child.kill("SIGTERM")
  })

/** Spawns `args`, times its `listening on` line and, when it printed a sandbox key, its first API answer; then stops it. */
const timeStart = (args: ReadonlyArray<string>, cwd: string): Promise<Start> =>
  new Promise((resolve, reject) => {
    const t0 = performance.now()
    const child = spawn(process.execPath, args, { cwd, stdio: ["ignore", "pipe", "pipe"] })
    let key: string | undefined
    let stderr = ""
    child.stderr!.on("data", (chunk) => (stderr += chunk))
    const failed = (code: number | null) => reject(new Error(`${args.join(" ")} exited ${code}: ${stderr}`))
    child.on("exit", failed)
    readline.createInterface({ input: child.stdout! }).on("line", (line) => {
      key ??= /sandbox secret key\s+(\S+)/.exec(line)?.[1]
      const url = /^listening on (http:\/\/\S+)$/.exec(line)?.[1]
      if (url === undefined) return
      const listeningMs = performance.now() - t0
      const cpuMs = cpuOf(child.pid!) / 1000
      child.off("exit", failed)
      const answered = key === undefined
        ? Promise.resolve({ listeningMs, cpuMs })
        : fetch(`${url}/v1/services`, { headers: { authorization: `Bearer ${key}` } }).then(async (response) => {
          await response.arrayBuffer()
          if (response.status !== 200) throw new Error(`GET /v1/services: ${response.status}`)
          return { listeningMs, cpuMs, firstAnswerMs: performance.now() - t0 }
        })
      answered.then((start) => stop(child).then(() => resolve(start)), (error) => stop(child).then(() => reject(error)))
    })
  })

const contestants: Array<{ readonly name: string; readonly run: () => Promise<Start> }> = [
  { name: "bare node", run: () => timeStart([...BIN_CAPS, "-e", BARE], here) },
  ...checkouts.map((dir) => ({
    name: checkouts.length === 1 ? "slotwise" : `slotwise ${path.relative(process.cwd(), dir) || "."}`,
    run: () => timeStart([...BIN_CAPS, "bin/slotwise.js", "serve", "--memory", "--port", "0", "--host", "127.0.0.1"], dir)
  }))
]

// One start each first: builds a stale dist/ and its bundle, and warms the file cache.
for (const contestant of contestants) await contestant.run()

const starts = contestants.map((): Array<Start> => [])
for (let round = 0; round < ROUNDS; round++) {
  for (let k = 0; k < contestants.length; k++) {
    const i = (round + k) % contestants.length
    starts[i]!.push(await contestants[i]!.run())
  }
}

const p90 = (xs: ReadonlyArray<number>): number => [...xs].sort((a, b) => a - b)[Math.ceil(xs.length * 0.9) - 1]!
const ms = (x: number) => `${x.toFixed(0).padStart(5)} ms`
const bare = median(starts[0]!.map((s) => s.listeningMs))
console.log(
  `${ROUNDS} rounds, load average ${os.loadavg().map((l) => l.toFixed(2)).join(" ")}, ${os.cpus().length} cores, node ${process.version}`
)
console.log(`${"".padEnd(28)} listening: median      p90   minus bare   CPU: median   minus bare   first GET /v1/services: median`)
const bareCpu = median(starts[0]!.map((s) => s.cpuMs))
contestants.forEach((contestant, i) => {
  const listening = starts[i]!.map((s) => s.listeningMs)
  const cpu = median(starts[i]!.map((s) => s.cpuMs))
  const answers = starts[i]!.flatMap((s) => (s.firstAnswerMs === undefined ? [] : [s.firstAnswerMs]))
  console.log(
    `${contestant.name.padEnd(28)}           ${ms(median(listening))} ${ms(p90(listening))}     ${ms(median(listening) - bare)}` +
      `     ${ms(cpu)}     ${ms(cpu - bareCpu)}` +
      (answers.length === 0 ? "" : `                       ${ms(median(answers))}`)
  )
})
