import { Effect } from "effect"
import { Accounts } from "../../../src/accounts/Accounts.js"
import { ApiKeys } from "../../../src/keys/ApiKeys.js"
import { SlotwiseApi } from "../api.js"
import { handlerGroup } from "./group.js"
import { asPrincipal, asTenant, currentPrincipal } from "./security.js"

const write = { uninterruptible: true } as const

export const AccountLive = handlerGroup(SlotwiseApi, "account", (handlers) =>
  Effect.gen(function*() {
    const accounts = yield* Accounts
    return handlers
      .handle("get", () => Effect.flatMap(currentPrincipal, (p) => accounts.get(p.account.id)))
      .handle("update", ({ payload }) => Effect.flatMap(currentPrincipal, (p) => accounts.updateSettings(p.account.id, payload)), write)
  }))

export const ApiKeysLive = handlerGroup(SlotwiseApi, "apiKeys", (handlers) =>
  Effect.gen(function*() {
    const keys = yield* ApiKeys
    return handlers
      .handle("list", ({ urlParams }) => asTenant(keys.list(urlParams)))
      .handle("create", ({ payload }) => asTenant(keys.create(payload)), write)
      .handle("exchange", () => asPrincipal((p) => keys.exchange(p.key.id)), write)
      .handle("get", ({ path }) => asTenant(keys.get(path.id)))
      .handle("rotate", ({ path, payload }) => asTenant(keys.rotate(path.id, payload)), write)
      .handle("revoke", ({ path }) => asTenant(keys.revoke(path.id)), write)
  }))
