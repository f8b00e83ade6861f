/** The clients feature: the `Clients` use case and a client's schemas. */
export { ClientListParams, Clients } from "./Clients.js"
export * from "./client.js"
