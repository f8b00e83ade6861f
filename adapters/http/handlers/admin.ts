import { Effect } from "effect"
import { Accounts } from "../../../src/accounts/Accounts.js"
import { SlotwiseApi } from "../api.js"
import { handlerGroup } from "./group.js"

export const AdminLive = handlerGroup(SlotwiseApi, "admin", (handlers) =>
  Effect.gen(function*() {
    const accounts = yield* Accounts
    return handlers
      .handle("createAccount", ({ payload }) => accounts.create(payload), { uninterruptible: true })
      .handle("getAccount", ({ path }) => accounts.get(path.id))
      .handle("updateAccount", ({ path, payload }) => accounts.update(path.id, payload), { uninterruptible: true })
  }))
