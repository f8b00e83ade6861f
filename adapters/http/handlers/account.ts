import { Effect } from "effect"
import { Accounts } from "../../../src/accounts/Accounts.js"
import { ApiKeys } from "../../../src/keys/ApiKeys.js"
import { SlotwiseApi } from "../api.js"
import { handlerGroup } from "./group.js"
import { CurrentPrincipal } from "../contract/security.js"
import { asPrincipal } from "./security.js"

const write = { uninterruptible: true } as const

export const AccountLive = handlerGroup(SlotwiseApi, "account", (handlers) =>
  Effect.gen(function*() {
    const accounts = yield* Accounts
    return handlers
      .handle("get", () => Effect.flatMap(CurrentPrincipal, ({ principal }) => accounts.get(principal.account.id)))
      .handle("update", ({ payload }) =>
        Effect.flatMap(CurrentPrincipal, ({ principal }) => accounts.updateSettings(principal.account.id, payload)), write)
  }))

export const ApiKeysLive = handlerGroup(SlotwiseApi, "apiKeys", (handlers) =>
  Effect.gen(function*() {
    const keys = yield* ApiKeys
    return handlers
      .handle("list", ({ urlParams }) => keys.list(urlParams))
      .handle("create", ({ payload }) => keys.create(payload), write)
      .handle("exchange", () => asPrincipal((p) => keys.exchange(p.key.id)), write)
      .handle("get", ({ path }) => keys.get(path.id))
      .handle("rotate", ({ path, payload }) => keys.rotate(path.id, payload), write)
      .handle("revoke", ({ path }) => keys.revoke(path.id), write)
  }))
