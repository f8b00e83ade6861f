import { Effect } from "effect"
import { Availability } from "../../../src/availability/Availability.js"
import { SlotwiseApi } from "../api.js"
import { handlerGroup } from "./group.js"
import { asAudience, asTenant } from "./security.js"

const write = { uninterruptible: true } as const

export const AvailabilityLive = handlerGroup(SlotwiseApi, "availability", (handlers) =>
  Effect.gen(function*() {
    const availability = yield* Availability
    return handlers
      .handle("slots", ({ urlParams }) => asTenant(availability.slots(urlParams)))
      .handle("explain", ({ urlParams }) => asTenant(availability.explain(urlParams)))
      .handle("createHold", ({ payload }) => asAudience(availability.hold(payload), (visitor) => availability.hold(payload, visitor)), write)
      .handle("getHold", ({ path }) => asTenant(availability.getHold(path.id)))
      .handle("releaseHold", ({ path }) => asTenant(availability.releaseHold(path.id)), write)
      .handle("list", ({ urlParams }) => asTenant(availability.list(urlParams)))
      .handle("create", ({ payload }) => asTenant(availability.create(payload)), write)
      .handle("get", ({ path }) => asTenant(availability.get(path.id)))
      .handle("update", ({ path, payload }) => asTenant(availability.update(path.id, payload)), write)
      .handle("delete", ({ path }) => asTenant(availability.delete(path.id)), write)
  }))
