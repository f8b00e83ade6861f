/**
 * The Slotwise API mounted under /scheduling in a plain node:http server, next to the host
 * application's own routes. Run: npx tsx examples/mounted.ts [port]
 */
import * as http from "node:http"
import { createHttpHandler } from "../index.js"

const port = Number(process.argv[2] ?? 3000)
const slotwise = await createHttpHandler({ storage: "memory", prefix: "/scheduling" })
const { account, keys } = await slotwise.createAccount({ name: "My shop", plan: "pro" })
// In memory: the account lives as long as this process. On a database (storage: { sqlite: "…" })
// `npx slotwise accounts list --database …` lists it.
console.log(`created account ${account.id} (${account.name}, plan ${account.plan}) in memory`)

const server = http.createServer((req, res) => {
  if (req.url === "/scheduling" || req.url?.startsWith("/scheduling/")) return slotwise.node(req, res)
  res.writeHead(200, { "content-type": "text/plain" }).end("the host application\n")
})

server.listen(port, "127.0.0.1", () => {
  const address = server.address() as { port: number }
  console.log(`listening on http://127.0.0.1:${address.port}`)
  console.log(`try: curl -H "Authorization: Bearer ${keys.sandbox.secret}" http://127.0.0.1:${address.port}/scheduling/v1/services`)
})

const stop = () => server.close(() => void slotwise.close())
process.on("SIGINT", stop)
process.on("SIGTERM", stop)
