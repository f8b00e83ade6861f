/**
 * The body step on node:http: a handler that asks for the body's bytes gets exactly the
 * bytes sent, also when the body came in pieces and was joined into a view of Node's
 * shared buffer pool.
 */
import { HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import { Effect } from "effect"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { readBody } from "../../adapters/http/middleware/body.js"

// Echoes the bytes and the parsed value the body step gives a handler.
const echo = Effect.gen(function*() {
  const body = yield* readBody(yield* HttpServerRequest.HttpServerRequest, "POST", "/echo")
  const bytes = yield* body.request.arrayBuffer
  return HttpServerResponse.unsafeJson({ bytes: new TextDecoder().decode(bytes), value: body.value })
})

let server: http.Server
let url: string
beforeAll(async () => {
  const handler = await Effect.runPromise(NodeHttpServer.makeHandler(echo))
  server = http.createServer(handler)
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/echo`
})
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())))

describe("the body step on node:http", () => {
  it("gives a handler the body's own bytes, not the buffer they were joined into", async () => {
    const text = JSON.stringify({ name: "Ana", notes: "é".repeat(40) })
    const half = Buffer.from(text).length >> 1
    // Two pieces, the second sent once the first is on its way: the server reads two chunks.
    const pieces = [Buffer.from(text).subarray(0, half), Buffer.from(text).subarray(half)]
    const stream = new ReadableStream({
      async pull(controller) {
        const next = pieces.shift()
        if (next === undefined) return controller.close()
        await new Promise((resolve) => setTimeout(resolve, 20))
        controller.enqueue(next)
      }
    })
    const response = await fetch(
      url,
      { method: "POST", headers: { "content-type": "application/json" }, body: stream, duplex: "half" } as RequestInit
    )
    expect(await response.json()).toEqual({ bytes: text, value: JSON.parse(text) })
  })
})
