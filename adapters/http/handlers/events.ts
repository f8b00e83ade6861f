import { Effect } from "effect"
import { Events } from "../../../src/events/Events.js"
import { SlotwiseApi } from "../api.js"
import { handlerGroup } from "./group.js"
import { asTenant } from "./security.js"

export const EventsLive = handlerGroup(SlotwiseApi, "events", (handlers) =>
  Effect.gen(function*() {
    const events = yield* Events
    return handlers
      .handle("list", ({ urlParams }) => asTenant(events.list(urlParams)))
      .handle("get", ({ path }) => asTenant(events.get(path.id)))
  }))
