import { Effect } from "effect"
import { Calendars } from "../../../src/calendars/Calendars.js"
import { SlotwiseApi } from "../api.js"
import { handlerGroup } from "./group.js"

const write = { uninterruptible: true } as const

export const CalendarsLive = handlerGroup(SlotwiseApi, "calendars", (handlers) =>
  Effect.gen(function*() {
    const calendars = yield* Calendars
    return handlers
      .handle("list", ({ path, urlParams }) => calendars.list(path.id, urlParams))
      .handle("create", ({ path, payload }) => calendars.create(path.id, payload), write)
      .handle("get", ({ path }) => calendars.get(path.id, path.calendar_id))
      .handle("delete", ({ path }) => calendars.delete(path.id, path.calendar_id), write)
      .handle("sync", ({ path }) => calendars.sync(path.id, path.calendar_id), write)
  }))
