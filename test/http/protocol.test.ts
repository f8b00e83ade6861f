/**
 * Requests that are almost right, and errors at the HTTP level, over real HTTP: another
 * authorization scheme, a JSON body in another charset, a JSON array as an action's body,
 * and what node:http's parser refuses before the app runs (raw sockets), each answered with
 * a problem document.
 */
import * as net from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { client, type Client, expectProblem, expectStatus, MONDAY_9, seed, startServer, type TestServer } from "./harness.js"

let server: TestServer
let api: Client
let ids: { booking: string; webhook: string; service: string }

beforeAll(async () => {
  server = await startServer({ allowPrivateWebhooks: true, webhooks: false })
  api = client(server.url, server.first.keys.sandbox.secret)
  const s = await seed(api)
  const booking = expectStatus(
    await api.post("/v1/bookings", { service_id: s.service.id, staff_id: s.staff.id, client_id: s.client.id, start: MONDAY_9 }),
    201
  )
  const webhook = expectStatus(await api.post("/v1/webhooks", { url: "http://127.0.0.1:9/hook", events: ["booking.created"] }), 201)
  ids = { booking: booking.id, webhook: webhook.id, service: s.service.id }
})
afterAll(() => server.close())

describe("authorization schemes", () => {
  it("Basic credentials get 401 saying to send a Bearer credential", async () => {
    const reply = await api.get("/v1/services", { key: undefined, headers: { authorization: "Basic dXNlcjpwYXNz" } })
    const problem = expectProblem(reply, 401, "unauthorized")
    expect(problem.detail).toMatch(/Basic.*not accepted.*Authorization: Bearer/)
    expect(reply.headers.get("www-authenticate")).toBe("Bearer realm=\"slotwise\"")
    expect(reply.headers.get("x-ratelimit-limit")).toBe("60")
  })

  it("a bearer scheme in any case works; an empty one is 401", async () => {
    const key = server.first.keys.sandbox.secret
    expectStatus(await api.get("/v1/services", { key: undefined, headers: { authorization: `bEaReR ${key}` } }), 200)
    const empty = expectProblem(await api.get("/v1/services", { key: undefined, headers: { authorization: "Bearer   " } }), 401)
    expect(empty.detail).toMatch(/empty bearer credential/)
  })
})

describe("JSON body charsets", () => {
  const post = (contentType: string) =>
    api.post("/v1/clients", undefined, { raw: JSON.stringify({ name: "Zoë" }), headers: { "content-type": contentType } })

  it.each([
    "application/json; charset=iso-8859-1",
    "application/json;charset=utf-16",
    "application/json; charset=\"latin1\"",
    "application/json; charset="
  ])(
    "%s is 415",
    async (type) => {
      const problem = expectProblem(await post(type), 415, "unsupported_media_type")
      expect(problem.detail).toMatch(/UTF-8/)
    }
  )

  it.each(["application/json; charset=utf-8", "application/json; charset=\"UTF-8\"", "application/json;charset=UTF8", "application/json"])(
    "%s is read",
    async (type) => {
      expect(expectStatus(await post(type), 201).name).toBe("Zoë")
    }
  )

  it("the filters body of GET /v1/bookings too", async () => {
    const reply = await api.get("/v1/bookings", {
      raw: "{\"status\":\"confirmed\"}",
      headers: { "content-type": "application/json; charset=windows-1252" }
    })
    expectProblem(reply, 415, "unsupported_media_type")
  })
})

describe("action bodies", () => {
  const actions = () => [
    `/v1/bookings/${ids.booking}/confirm`,
    `/v1/bookings/${ids.booking}/complete`,
    `/v1/bookings/${ids.booking}/no-show`,
    "/v1/api-keys/exchange",
    `/v1/webhooks/${ids.webhook}/deliveries/whd_01M84X9MJ5J9HFAG954DM1DQ83/retry`,
    `/v1/webhooks/${ids.webhook}/test`,
    "/v1/sandbox/reset"
  ]

  it.each(["[]", "[{}]", "5", "true", "\"confirm\""])("%s is 422 on every action, and changes nothing", async (raw) => {
    const before = expectStatus(await api.get(`/v1/bookings/${ids.booking}`), 200)
    const keys = expectStatus(await api.get("/v1/api-keys"), 200).data.length
    for (const path of actions()) {
      const problem = expectProblem(
        await api.post(path, undefined, { raw, headers: { "content-type": "application/json" } }),
        422,
        "validation_failed"
      )
      expect(problem.errors.length, path).toBeGreaterThan(0)
    }
    expect(expectStatus(await api.get(`/v1/bookings/${ids.booking}`), 200)).toEqual(before)
    expect(expectStatus(await api.get("/v1/api-keys"), 200).data.length).toBe(keys)
    expectStatus(await api.get(`/v1/services/${ids.service}`), 200)
  })

  it("{} and no body are still accepted", async () => {
    expect(expectStatus(await api.post("/v1/api-keys/exchange", {}), 201).environment).toBe("production")
    expectStatus(await api.post(`/v1/webhooks/${ids.webhook}/test`), 202)
  })
})

interface RawReply {
  readonly status: number
  readonly headers: Record<string, string>
  readonly body: string
}

/** Writes `bytes` on a fresh connection and reads the whole reply until the server closes. */
const rawExchange = (bytes: string): Promise<RawReply> =>
  new Promise((resolve, reject) => {
    const { hostname, port } = new URL(server.url)
    const socket = net.connect({ host: hostname, port: Number(port) })
    const chunks: Array<Buffer> = []
    socket.on("data", (chunk) => chunks.push(chunk))
    socket.on("error", reject)
    socket.on("close", () => {
      const text = Buffer.concat(chunks).toString("utf8")
      const [head = "", body = ""] = text.split("\r\n\r\n", 2)
      const [statusLine = "", ...lines] = head.split("\r\n")
      const headers: Record<string, string> = {}
      for (const line of lines) {
        const i = line.indexOf(":")
        headers[line.slice(0, i).toLowerCase()] = line.slice(i + 1).trim()
      }
      resolve({ status: Number(statusLine.split(" ")[1]), headers, body })
    })
    socket.end(bytes)
  })

describe("errors node:http raises before the app runs", () => {
  const expectRawProblem = (reply: RawReply, status: number, code: string) => {
    expect(reply.status).toBe(status)
    expect(reply.headers["content-type"]).toBe("application/problem+json")
    expect(Number(reply.headers["content-length"])).toBe(Buffer.byteLength(reply.body))
    const problem = JSON.parse(reply.body)
    expect(problem).toMatchObject({ status, code })
    expect(problem.type).toMatch(new RegExp(`/${code}$`))
    expect(typeof problem.title).toBe("string")
    expect(typeof problem.detail).toBe("string")
    return problem
  }

  it("headers over 16 KiB are 431", async () => {
    const reply = await rawExchange(`GET /v1/services HTTP/1.1\r\nHost: x\r\nX-Padding: ${"a".repeat(17 * 1024)}\r\n\r\n`)
    expectRawProblem(reply, 431, "headers_too_large")
  })

  it("a URL over 16 KiB is 431", async () => {
    const reply = await rawExchange(`GET /v1/services?q=${"a".repeat(17 * 1024)} HTTP/1.1\r\nHost: x\r\n\r\n`)
    expectRawProblem(reply, 431, "headers_too_large")
  })

  it("headers just under the limit reach the app", async () => {
    const reply = await rawExchange(
      `GET /v1/services HTTP/1.1\r\nHost: x\r\nConnection: close\r\nX-Padding: ${"a".repeat(15 * 1024)}\r\n\r\n`
    )
    expect(reply.status).toBe(401)
    expect(reply.headers["content-type"]).toBe("application/problem+json")
  })

  it.each([
    ["an unknown method", "BREW /v1/services HTTP/1.1\r\nHost: x\r\n\r\n"],
    ["a header line without a colon", "GET /v1/services HTTP/1.1\r\nHost: x\r\nnot a header\r\n\r\n"],
    [
      "both Content-Length and chunked",
      "POST /v1/clients HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"
    ],
    ["two different Content-Lengths", "POST /v1/clients HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}"],
    ["a bad HTTP version", "GET /v1/services HTTP/9.9x\r\nHost: x\r\n\r\n"],
    ["not HTTP at all", "\u0016\u0003\u0001\u0002\u0000\u0001\u0000\u0001\u00fc\u0003\u0003\r\n\r\n"]
  ])("%s is 400", async (_, bytes) => {
    expectRawProblem(await rawExchange(bytes), 400, "bad_request")
  })
})
