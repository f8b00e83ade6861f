/** Clients: the people who book (docs/api.md §3). */
import { Effect, Schema } from "effect"
import { Client, ClientCreate, clientDefaults, ClientUpdate } from "./client.js"
import { Events } from "../events/Events.js"
import { findOr404, listPage, newResource, PageParams, patchResource } from "../internal/resources.js"
import { decodeInput } from "../domain/validation.js"
import { BookingsCollection } from "../bookings/collections.js"
import { ClientsCollection } from "./collections.js"
import { type Condition, Storage } from "../ports/storage.js"
import { refuseIfBooked } from "../services/Services.js"

export const ClientListParams = Schema.Struct({
  ...PageParams,
  email: Schema.optionalWith(
    Schema.String.pipe(Schema.maxLength(254), Schema.annotations({ description: "only the clients with this email address" })),
    { exact: true }
  )
})
export type ClientListParams = typeof ClientListParams.Encoded

export class Clients extends Effect.Service<Clients>()("slotwise/Clients", {
  effect: Effect.gen(function*() {
    const storage = yield* Storage
    const events = yield* Events
    const clients = storage.collection(ClientsCollection)
    const bookings = storage.collection(BookingsCollection)
    const find = findOr404(clients, "client")
    const decodeCreate = decodeInput(ClientCreate)
    const decodeUpdate = decodeInput(ClientUpdate)
    const decodeList = decodeInput(ClientListParams)
    const validate = decodeInput(Client)

    /**
     * Inserts an already-decoded client inside the caller's change (bookings create inline
     * clients). Chained, not a generator: a visitor's every booking runs it.
     */
    const insert = (fields: ClientCreate) =>
      Effect.flatMap(newResource("client"), (resource) => {
        const client: Client = { ...resource, object: "client", ...clientDefaults, ...fields }
        return Effect.zipRight(clients.insert(client), Effect.as(events.record("client.created", client), client))
      })

    const create = (input: typeof ClientCreate.Encoded) => Effect.flatMap(decodeCreate(input), (fields) => events.mutate(insert(fields)))

    const patch = patchResource({ events, collection: clients, find, validate, type: "client.updated" })
    const update = (id: string, input: typeof ClientUpdate.Encoded) => Effect.flatMap(decodeUpdate(input), (fields) => patch(id, fields))

    const remove = (id: string) =>
      events.mutate(Effect.gen(function*() {
        const current = yield* find(id)
        yield* refuseIfBooked(bookings, [{ column: "client_id", op: "eq", value: id }], `client ${id}`)
        yield* clients.remove(id)
        yield* events.record("client.deleted", current)
        return current
      }))

    const list = (params: ClientListParams = {}) =>
      Effect.gen(function*() {
        const { cursor, email, limit } = yield* decodeList(params)
        const where: Array<Condition> = email === undefined
          ? []
          : [{ column: "email", op: "eq", value: email.toLowerCase() }]
        return yield* listPage(clients, { where, limit, cursor, filters: { email } })
      })

    return { create, insert, get: find, list, update, delete: remove } as const
  })
}) {}
