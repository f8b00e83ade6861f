import { Effect } from "effect"
import { Availability } from "../../../src/availability/Availability.js"
import { SlotwiseApi } from "../api.js"
import { handlerGroup } from "./group.js"
import { asAudience } from "./security.js"

const write = { uninterruptible: true } as const

export const AvailabilityLive = handlerGroup(SlotwiseApi, "availability", (handlers) =>
  Effect.gen(function*() {
    const availability = yield* Availability
    return handlers
      .handle("slots", ({ urlParams }) => availability.slots(urlParams))
      .handle("explain", ({ urlParams }) => availability.explain(urlParams))
      .handle(
        "createHold",
        ({ payload }) => asAudience(availability.hold(payload), (visitor) => availability.hold(payload, visitor)),
        write
      )
      .handle("getHold", ({ path }) => availability.getHold(path.id))
      .handle("releaseHold", ({ path }) => availability.releaseHold(path.id), write)
      .handle("list", ({ urlParams }) => availability.list(urlParams))
      .handle("create", ({ payload }) => availability.create(payload), write)
      .handle("get", ({ path }) => availability.get(path.id))
      .handle("update", ({ path, payload }) => availability.update(path.id, payload), write)
      .handle("delete", ({ path }) => availability.delete(path.id), write)
  }))
