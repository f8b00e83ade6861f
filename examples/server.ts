/**
 * The server as a library: the same layers as `slotwise serve`, on in-memory storage.
 * Run: npx tsx examples/server.ts
 */
import { Effect, Layer } from "effect"
import { serverLayer } from "../compose.js"

const server = serverLayer({
  port: 8080,
  host: "127.0.0.1",
  storage: "memory",
  // The first start creates an account; on a database file `npx slotwise accounts list
  // --database <file>` lists it later (here it is in memory and lasts as long as the process).
  onFirstAccount: ({ account, keys }) => {
    console.log(`created account ${account.id} (${account.name}); publishable keys allowed from ${account.allowed_origins.join(", ")}`)
    console.log(`sandbox secret key: ${keys.sandbox.secret}`)
  },
  onListening: (url) => console.log(`listening on ${url}; try: curl ${url}/v1/account -H "Authorization: Bearer <sandbox secret key>"`),
  log: (line) => console.log(line)
})

Effect.runFork(Layer.launch(server))
