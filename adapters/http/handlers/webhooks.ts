import { Effect } from "effect"
import { Webhooks } from "../../../src/webhooks/Webhooks.js"
import { SlotwiseApi } from "../api.js"
import { handlerGroup } from "./group.js"

const write = { uninterruptible: true } as const

export const WebhooksLive = handlerGroup(SlotwiseApi, "webhooks", (handlers) =>
  Effect.gen(function*() {
    const webhooks = yield* Webhooks
    return handlers
      .handle("list", ({ urlParams }) => webhooks.list(urlParams))
      .handle("create", ({ payload }) => webhooks.create(payload), write)
      .handle("get", ({ path }) => webhooks.get(path.id))
      .handle("update", ({ path, payload }) => webhooks.update(path.id, payload), write)
      .handle("delete", ({ path }) => webhooks.delete(path.id), write)
      .handle("rotateSecret", ({ path, payload }) => webhooks.rotateSecret(path.id, payload), write)
      .handle("listDeliveries", ({ path, urlParams }) => webhooks.listDeliveries(path.id, urlParams))
      .handle("getDelivery", ({ path }) => webhooks.getDelivery(path.id, path.did))
      .handle("retryDelivery", ({ path }) => webhooks.retryDelivery(path.id, path.did), write)
      .handle("sendTest", ({ path }) => webhooks.sendTest(path.id), write)
      .handle("recover", ({ path, payload }) => webhooks.recover(path.id, payload), write)
  }))
