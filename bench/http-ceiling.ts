/**
 * The HTTP stack's ceiling, printed (not asserted). Run: `npx tsx bench/http-ceiling.ts`.
 * The same small JSON GET served three ways, each server in its own process, loaded with
 * autocannon: bare node:http; a no-op `@effect/platform` HttpApi endpoint (the stack
 * DESIGN.md chose for /v1, tracing off, no auth, no storage); and the baseline of
 * `bench/http.ts` (node:http + better-sqlite3 reading a booking by id) for scale. The HttpApi
 * figure bounds what any /v1 read can reach before Slotwise does any work.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { createServer } from "node:http"
import { createRequire } from "node:module"
import { fileURLToPath } from "node:url"
import { HttpApi, HttpApiBuilder, HttpApiEndpoint, HttpApiGroup, HttpMiddleware } from "@effect/platform"
import { NodeHttpServer, NodeRuntime } from "@effect/platform-node"
import { Effect, Layer, Schema } from "effect"

const body = { id: "bkg_01", object: "booking", start: "2027-01-01T10:00:00Z", status: "confirmed", metadata: {} }
const mode = process.argv[2]

if (mode === "bare") {
  const text = JSON.stringify(body)
  createServer((_, res) => {
    res.writeHead(200, { "content-type": "application/json" })
    res.end(text)
  }).listen(0, "127.0.0.1", function(this: any) {
    process.stdout.write(`port ${this.address().port}\n`)
  })
} else if (mode === "httpapi") {
  const Booking = Schema.Struct({
    id: Schema.String,
    object: Schema.Literal("booking"),
    start: Schema.String,
    status: Schema.String,
    metadata: Schema.Record({ key: Schema.String, value: Schema.String })
  })
  const Api = HttpApi.make("ceiling").add(
    HttpApiGroup.make("g").add(
      HttpApiEndpoint.get("get", "/v1/bookings/:id").setPath(Schema.Struct({ id: Schema.String })).addSuccess(Booking)
    )
  )
  const Handlers = HttpApiBuilder.group(Api, "g", (h) => h.handle("get", ({ path }) => Effect.succeed({ ...body, id: path.id, object: "booking" as const })))
  const server = createServer()
  server.on("listening", () => process.stdout.write(`port ${(server.address() as any).port}\n`))
  NodeRuntime.runMain(Layer.launch(
    HttpApiBuilder.serve().pipe(
      Layer.provide(HttpApiBuilder.api(Api).pipe(Layer.provide(Handlers))),
      HttpMiddleware.withTracerDisabledWhen(() => true),
      Layer.provide(NodeHttpServer.layer(() => server, { port: 0, host: "127.0.0.1" }))
    )
  ))
} else {
  const autocannon = createRequire(import.meta.url)("autocannon") as (options: any) => Promise<any>
  const self = fileURLToPath(import.meta.url)
  const children: Array<ChildProcess> = []
  process.on("exit", () => children.forEach((c) => c.kill("SIGKILL")))
  const start = (which: string) =>
    new Promise<number>((resolve, reject) => {
      const child = spawn(process.execPath, ["--import", "tsx", self, which], { stdio: ["ignore", "pipe", "inherit"] })
      children.push(child)
      child.stdout!.on("data", (d) => {
        const m = /port (\d+)/.exec(String(d))
        if (m) resolve(Number(m[1]))
      })
      child.on("exit", (code) => reject(new Error(`${which} exited ${code}`)))
    })
  const results: Record<string, number> = {}
  for (const which of ["bare", "httpapi"]) {
    const port = await start(which)
    const r = await autocannon({ url: `http://127.0.0.1:${port}/v1/bookings/bkg_01`, connections: 10, duration: 5 })
    results[which] = r.requests.average
    console.log(`${which.padEnd(8)} ${Math.round(r.requests.average).toString().padStart(7)} req/s  p99 ${r.latency.p99} ms`)
  }
  console.log(`no-op HttpApi / bare node:http: ${(results.httpapi! / results.bare!).toFixed(2)}×`)
  console.log("compare with bench/http.ts's baseline GET (node:http + better-sqlite3) to bound /v1 reads")
  process.exit(0)
}
