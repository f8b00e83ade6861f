import { Effect } from "effect"
import { OAuthClients } from "../../../src/oauth/OAuthClients.js"
import { OAuthGrants } from "../../../src/oauth/OAuthGrants.js"
import { SlotwiseApi } from "../api.js"
import { handlerGroup } from "./group.js"
import { asTenant } from "./security.js"

const write = { uninterruptible: true } as const

export const OAuthClientsLive = handlerGroup(SlotwiseApi, "oauthClients", (handlers) =>
  Effect.gen(function*() {
    const clients = yield* OAuthClients
    return handlers
      .handle("list", ({ urlParams }) => asTenant(clients.list(urlParams)))
      .handle("create", ({ payload }) => asTenant(clients.create(payload)), write)
      .handle("get", ({ path }) => asTenant(clients.get(path.id)))
      .handle("update", ({ path, payload }) => asTenant(clients.update(path.id, payload)), write)
      .handle("rotateSecret", ({ path }) => asTenant(clients.rotateSecret(path.id)), write)
      .handle("remove", ({ path }) => asTenant(clients.remove(path.id)), write)
  }))

export const OAuthGrantsLive = handlerGroup(SlotwiseApi, "oauthGrants", (handlers) =>
  Effect.gen(function*() {
    const grants = yield* OAuthGrants
    return handlers
      .handle("list", ({ urlParams }) => asTenant(grants.list(urlParams)))
      .handle("get", ({ path }) => asTenant(grants.get(path.id)))
      .handle("revoke", ({ path }) => asTenant(grants.revoke(path.id)), write)
  }))
