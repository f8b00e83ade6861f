/** The clients' collection: what it is indexed by, for filters and order. */
import type { Client } from "./client.js"
import type { CollectionSpec } from "../ports/storage.js"

export const ClientsCollection: CollectionSpec<Client> = {
  name: "clients",
  indexes: { email: { type: "text", get: (c) => c.email?.toLowerCase() ?? null } },
  order: []
}
