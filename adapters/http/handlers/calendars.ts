import { Effect } from "effect"
import { Calendars } from "../../../src/calendars/Calendars.js"
import { SlotwiseApi } from "../api.js"
import { handlerGroup } from "./group.js"
import { asTenant } from "./security.js"

const write = { uninterruptible: true } as const

export const CalendarsLive = handlerGroup(SlotwiseApi, "calendars", (handlers) =>
  Effect.gen(function*() {
    const calendars = yield* Calendars
    return handlers
      .handle("list", ({ path, urlParams }) => asTenant(calendars.list(path.id, urlParams)))
      .handle("create", ({ path, payload }) => asTenant(calendars.create(path.id, payload)), write)
      .handle("get", ({ path }) => asTenant(calendars.get(path.id, path.calendar_id)))
      .handle("delete", ({ path }) => asTenant(calendars.delete(path.id, path.calendar_id)), write)
      .handle("sync", ({ path }) => asTenant(calendars.sync(path.id, path.calendar_id)), write)
  }))
