import { Effect } from "effect"
import { Users } from "../../../src/users/Users.js"
import { SlotwiseApi } from "../api.js"
import { handlerGroup } from "./group.js"

export const AdminUsersLive = handlerGroup(SlotwiseApi, "adminUsers", (handlers) =>
  Effect.gen(function*() {
    const users = yield* Users
    return handlers
      .handle("create", ({ path, payload }) => users.create(path.id, payload), { uninterruptible: true })
      .handle("list", ({ path, urlParams }) => users.list(path.id, urlParams))
      .handle("get", ({ path }) => users.get(path.id, path.uid))
      .handle("remove", ({ path }) => users.remove(path.id, path.uid), { uninterruptible: true })
  }))
