import { Effect } from "effect"
import { Events } from "../../../src/events/Events.js"
import { SlotwiseApi } from "../api.js"
import { handlerGroup } from "./group.js"

export const EventsLive = handlerGroup(SlotwiseApi, "events", (handlers) =>
  Effect.gen(function*() {
    const events = yield* Events
    return handlers
      .handle("list", ({ urlParams }) => events.list(urlParams))
      .handle("get", ({ path }) => events.get(path.id))
  }))
