import { Effect } from "effect"
import { Webhooks } from "../../../src/webhooks/Webhooks.js"
import { SlotwiseApi } from "../api.js"
import { handlerGroup } from "./group.js"
import { asTenant } from "./security.js"

const write = { uninterruptible: true } as const

export const WebhooksLive = handlerGroup(SlotwiseApi, "webhooks", (handlers) =>
  Effect.gen(function*() {
    const webhooks = yield* Webhooks
    return handlers
      .handle("list", ({ urlParams }) => asTenant(webhooks.list(urlParams)))
      .handle("create", ({ payload }) => asTenant(webhooks.create(payload)), write)
      .handle("get", ({ path }) => asTenant(webhooks.get(path.id)))
      .handle("update", ({ path, payload }) => asTenant(webhooks.update(path.id, payload)), write)
      .handle("delete", ({ path }) => asTenant(webhooks.delete(path.id)), write)
      .handle("rotateSecret", ({ path, payload }) => asTenant(webhooks.rotateSecret(path.id, payload)), write)
      .handle("listDeliveries", ({ path, urlParams }) => asTenant(webhooks.listDeliveries(path.id, urlParams)))
      .handle("getDelivery", ({ path }) => asTenant(webhooks.getDelivery(path.id, path.did)))
      .handle("retryDelivery", ({ path }) => asTenant(webhooks.retryDelivery(path.id, path.did)), write)
      .handle("sendTest", ({ path }) => asTenant(webhooks.sendTest(path.id)), write)
      .handle("recover", ({ path, payload }) => asTenant(webhooks.recover(path.id, payload)), write)
  }))
