/**
 * Real processes for the multi-instance tests: `slotwise serve` (main.ts, bundled once by the
 * HTTP tests' harness) and a `redis-server` of the test's own on a free port, which a test
 * may stop and start again. Everything started here is killed when the run ends.
 */
import { type ChildProcess, spawn } from "node:child_process"
import * as net from "node:net"
import { type Client, type Reply, replyOf, type RequestOptions, serveProcess } from "../http/harness.js"
import { waitFor } from "../webhooks/receiver.js"

const children = new Set<ChildProcess>()
/** Kills every process this module started that is still running. */
export const killAll = () => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL")
}

export interface Instance {
  readonly url: string
  readonly lines: Array<string>
  readonly process: ChildProcess
  readonly exited: Promise<number | null>
}

/** `slotwise serve --port 0 …args` (the HTTP tests' bundled binary), resolved once it prints `listening on`. */
export const serve = async (args: ReadonlyArray<string>, env: Record<string, string> = {}): Promise<Instance> => {
  const server = await serveProcess(args, { SLOTWISE_ADMIN_TOKEN: "", SLOTWISE_DATABASE_URL: "", SLOTWISE_REDIS_URL: "", ...env })
  children.add(server.process)
  return { url: server.url, lines: server.lines, process: server.process, exited: server.exited.then((e) => e.code) }
}

/** SIGKILLs the instance and waits for it to be gone. */
export const stop = async (instance: Instance): Promise<void> => {
  if (instance.process.exitCode === null && instance.process.signalCode === null) instance.process.kill("SIGKILL")
  await instance.exited
}

export const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const server = net.createServer()
    server.on("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const port = (server.address() as net.AddressInfo).port
      server.close(() => resolve(port))
    })
  })

/** Whether something accepts TCP connections on the port now. */
const answers = (port: number): Promise<boolean> =>
  new Promise((resolve) => {
    const socket = net.connect(port, "127.0.0.1")
    socket.once("connect", () => {
      socket.destroy()
      resolve(true)
    })
    socket.once("error", () => resolve(false))
  })

export interface RedisServer {
  readonly url: string
  readonly start: () => Promise<void>
  readonly stop: () => Promise<void>
}

/** A `redis-server` without persistence on a free port, not started yet. */
export const redisServer = async (): Promise<RedisServer> => {
  const port = await freePort()
  let child: ChildProcess | undefined
  return {
    url: `redis://127.0.0.1:${port}`,
    start: async () => {
      const c = spawn("redis-server", ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"], {
        stdio: "ignore"
      })
      children.add(c)
      child = c
      await waitFor(() => answers(port), 20_000, `redis-server on ${port}`)
    },
    stop: async () => {
      const c = child
      if (c === undefined || c.exitCode !== null) return
      const exited = new Promise((r) => c.once("exit", r))
      c.kill("SIGTERM")
      await exited
    }
  }
}

/**
 * The test harness's client over fetch: undici retires a pooled connection before the
 * server's keep-alive timeout (it reads `Keep-Alive: timeout=5`), where node:http's agent may
 * reuse one the server is closing at that moment ("socket hang up") when tests pause.
 */
export const client = (base: string, key?: string): Client => {
  const send = async (method: string, path: string, options: RequestOptions = {}): Promise<Reply> => {
    const headers: Record<string, string> = { ...options.headers }
    if (key !== undefined) headers["authorization"] = `Bearer ${key}`
    let body: string | Uint8Array | undefined = options.raw
    if (body === undefined && options.body !== undefined) {
      body = JSON.stringify(options.body)
      headers["content-type"] ??= "application/json"
    }
    const response = await fetch(base + path, { method, headers, ...(body === undefined ? {} : { body: body as BodyInit }) })
    return replyOf(response.status, response.headers, await response.text())
  }
  return {
    get: (path, options = {}) => send("GET", path, options),
    post: (path, body, options = {}) => send("POST", path, { body, ...options }),
    patch: (path, body, options = {}) => send("PATCH", path, { body, ...options }),
    del: (path, options = {}) => send("DELETE", path, options),
    send: (method, path, options = {}) => send(method, path, options)
  }
}
