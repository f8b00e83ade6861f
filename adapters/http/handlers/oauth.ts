import { Effect } from "effect"
import { OAuthClients } from "../../../src/oauth/OAuthClients.js"
import { OAuthGrants } from "../../../src/oauth/OAuthGrants.js"
import { SlotwiseApi } from "../api.js"
import { handlerGroup } from "./group.js"

const write = { uninterruptible: true } as const

export const OAuthClientsLive = handlerGroup(SlotwiseApi, "oauthClients", (handlers) =>
  Effect.gen(function*() {
    const clients = yield* OAuthClients
    return handlers
      .handle("list", ({ urlParams }) => clients.list(urlParams))
      .handle("create", ({ payload }) => clients.create(payload), write)
      .handle("get", ({ path }) => clients.get(path.id))
      .handle("update", ({ path, payload }) => clients.update(path.id, payload), write)
      .handle("rotateSecret", ({ path }) => clients.rotateSecret(path.id), write)
      .handle("remove", ({ path }) => clients.remove(path.id), write)
  }))

export const OAuthGrantsLive = handlerGroup(SlotwiseApi, "oauthGrants", (handlers) =>
  Effect.gen(function*() {
    const grants = yield* OAuthGrants
    return handlers
      .handle("list", ({ urlParams }) => grants.list(urlParams))
      .handle("get", ({ path }) => grants.get(path.id))
      .handle("revoke", ({ path }) => grants.revoke(path.id), write)
  }))
