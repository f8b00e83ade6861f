/**
 * Bodies sent without `Content-Length` (Transfer-Encoding: chunked): the 1 MiB limit holds
 * for them too, answered with a 413 problem the client can read, not a reset connection.
 */
import * as http from "node:http"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { MAX_BODY_BYTES } from "../../adapters/http/middleware/body.js"
import { client, type Client, expectProblem, expectStatus, replyOf, type Reply, startServer, type TestServer } from "./harness.js"

let server: TestServer
let api: Client
beforeAll(async () => {
  server = await startServer()
  api = client(server.url, server.first.keys.sandbox.secret)
})
afterAll(() => server.close())

const CHUNK = 64 * 1024

/**
 * POSTs `head`, then `padding` bytes of JSON whitespace in 64 KiB chunks, then `tail`, chunked,
 * on `agent`'s keep-alive socket. Resolves once the response is read and the upload is either
 * complete or abandoned: like curl, the client stops sending once the answer has arrived.
 */
const streamChunked = (agent: http.Agent, path: string, head: string, padding: number, tail: string) =>
  new Promise<{ reply: Reply; socket: unknown; uploaded: boolean }>((resolve, reject) => {
    const url = new URL(server.url)
    let reply: Reply | undefined
    let uploaded = false
    let socket: unknown
    const req = http.request({
      host: url.hostname,
      port: url.port,
      method: "POST",
      path,
      agent,
      headers: {
        authorization: `Bearer ${server.first.keys.sandbox.secret}`,
        "content-type": "application/json",
        "transfer-encoding": "chunked"
      }
    }, (res) => {
      const chunks: Array<Buffer> = []
      res.on("data", (c: Buffer) => chunks.push(c))
      res.on("end", () => {
        const headers = new Headers()
        for (const [k, v] of Object.entries(res.headers)) if (v !== undefined) headers.set(k, Array.isArray(v) ? v.join(", ") : v)
        reply = replyOf(res.statusCode!, headers, Buffer.concat(chunks).toString("utf8"))
        if (uploaded) resolve({ reply, socket, uploaded })
        else {
          req.destroy()
          resolve({ reply, socket, uploaded })
        }
      })
      res.on("error", reject)
    })
    req.on("socket", (s) => (socket = s))
    req.on("error", (error) => reply === undefined && reject(error))
    req.on("finish", () => {
      uploaded = true
      if (reply !== undefined) resolve({ reply, socket, uploaded })
    })
    let left = padding
    const pump = () => {
      while (left > 0 && reply === undefined) {
        const size = Math.min(CHUNK, left)
        left -= size
        if (!req.write(Buffer.alloc(size, 0x20))) {
          req.once("drain", pump)
          return
        }
      }
      if (reply === undefined) req.end(tail)
    }
    req.write(head)
    pump()
  })

describe("chunked request bodies", () => {
  it("over 1 MiB: 413 payload_too_large as a problem, the upload completes, nothing is written, the connection stays usable", async () => {
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 })
    try {
      const before = expectStatus(await api.get("/v1/clients?limit=100"), 200).data.length
      const big = await streamChunked(agent, "/v1/clients", "{\"name\":\"Big\"", MAX_BODY_BYTES + 3 * CHUNK, "}")
      expect(big.uploaded).toBe(true)
      const problem = expectProblem(big.reply, 413, "payload_too_large")
      expect(problem.detail).toBe("the body exceeds 1048576 bytes (1 MiB)")
      // The same socket then carries a request that succeeds.
      const small = await streamChunked(agent, "/v1/clients", "{\"name\":\"Small\"", 10, "}")
      expect(small.socket).toBe(big.socket)
      expect(expectStatus(small.reply, 201).name).toBe("Small")
      expect(expectStatus(await api.get("/v1/clients?limit=100"), 200).data.map((c: any) => c.name)).not.toContain("Big")
      expect(expectStatus(await api.get("/v1/clients?limit=100"), 200).data).toHaveLength(before + 1)
    } finally {
      agent.destroy()
    }
  })

  it("several MiB over: 413 while the client is still sending, never a reset", async () => {
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 })
    try {
      const { reply } = await streamChunked(agent, "/v1/clients", "{\"name\":\"Huge\"", 6 * MAX_BODY_BYTES, "}")
      expectProblem(reply, 413, "payload_too_large")
    } finally {
      agent.destroy()
    }
  })

  it("exactly 1 MiB chunked is read and decoded", async () => {
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 })
    try {
      const head = "{\"name\":\"Edge\""
      const { reply } = await streamChunked(agent, "/v1/clients", head, MAX_BODY_BYTES - head.length - 1, "}")
      expect(expectStatus(reply, 201).name).toBe("Edge")
    } finally {
      agent.destroy()
    }
  })
})
