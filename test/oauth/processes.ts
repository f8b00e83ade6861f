/**
 * The `slotwise` binary as child processes (main.ts, bundled once by the HTTP tests' helper): `serve` until it prints
 * its address, and the offline commands with their standard input.
 */
import { type ChildProcess, spawn } from "node:child_process"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { binary, serveProcess } from "../http/harness.js"

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..")
const children: Array<ChildProcess> = []

/** Kills the servers still running (a failed test leaves them). */
export const killAll = () => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill("SIGKILL")
}

/** An offline command with `input` on its standard input; its exit code and output. */
export const cli = async (args: ReadonlyArray<string>, input = "") => {
  const entry = await binary()
  return new Promise<{ readonly status: number | null; readonly stdout: string; readonly stderr: string }>((resolve, reject) => {
    const child = spawn(process.execPath, [entry, ...args], {
      cwd: root,
      stdio: ["pipe", "pipe", "pipe"],
      env: { ...process.env, SLOTWISE_ADMIN_TOKEN: "", SLOTWISE_PUBLIC_URL: "" }
    })
    let stdout = ""
    let stderr = ""
    child.stdout!.on("data", (d) => (stdout += String(d)))
    child.stderr!.on("data", (d) => (stderr += String(d)))
    child.on("error", reject)
    child.on("close", (status) => resolve({ status, stdout, stderr }))
    child.stdin!.end(input)
  })
}

export interface ServeProcess {
  readonly url: string
  readonly lines: Array<string>
  /** SIGTERM, then the exit code. */
  readonly stop: () => Promise<number | null>
}

export const serve = async (args: ReadonlyArray<string>): Promise<ServeProcess> => {
  const server = await serveProcess(args, { SLOTWISE_ADMIN_TOKEN: "", SLOTWISE_PUBLIC_URL: "" })
  children.push(server.process)
  return {
    url: server.url,
    lines: server.lines,
    stop: () => {
      server.process.kill("SIGTERM")
      return server.exited.then((e) => e.code)
    }
  }
}
