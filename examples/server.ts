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
  onFirstAccount: ({ keys }) => console.log(`sandbox secret key: ${keys.sandbox.secret}`),
  onListening: (url) => console.log(`listening on ${url}`)
})

Effect.runFork(Layer.launch(server))
