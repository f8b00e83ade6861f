/**
 * Manage links over HTTP. The client's endpoints are counted by client address before the
 * token is looked at, and writes by booking once it is: both through the shared rate-limit
 * store, so the limits hold across instances.
 */
import { Effect } from "effect"
import { Manage } from "../../../src/manage/Manage.js"
import { manageAddressPolicy, manageWritePolicy } from "../../../src/ratelimit/policy.js"
import { RateLimiter } from "../../../src/ratelimit/RateLimiter.js"
import { SlotwiseApi } from "../api.js"
import { handlerGroup } from "./group.js"
import { admitted } from "../middleware/gate.js"

const write = { uninterruptible: true } as const

export const ManageLinksLive = handlerGroup(
  SlotwiseApi,
  "manageLinks",
  (handlers) => Effect.map(Manage, (manage) => handlers.handle("rotate", ({ path }) => manage.rotate(path.id), write))
)

export const ManageLive = handlerGroup(SlotwiseApi, "manage", (handlers) =>
  Effect.gen(function*() {
    const manage = yield* Manage
    const limiter = yield* RateLimiter

    // A request that did not come through the gate is counted under one shared address, never not at all.
    const perAddress = Effect.flatMap(admitted, (passage) => limiter.enforce(manageAddressPolicy(passage?.address() ?? "unknown")))
    /** Counts a write against the booking the token opens (a token that opens none is the usual 404). */
    const perBooking = (token: string) =>
      Effect.flatMap(manage.open(token), (opened) => limiter.enforce(manageWritePolicy(opened.tenant, opened.booking.id)))

    return handlers
      .handle("get", ({ path }) => Effect.zipRight(perAddress, manage.get(path.token)))
      .handle("slots", ({ path, urlParams }) => Effect.zipRight(perAddress, manage.slots(path.token, urlParams)))
      .handle(
        "cancel",
        ({ path, payload }) =>
          perAddress.pipe(Effect.zipRight(perBooking(path.token)), Effect.zipRight(manage.cancel(path.token, payload))),
        write
      )
      .handle(
        "reschedule",
        ({ path, payload }) =>
          perAddress.pipe(Effect.zipRight(perBooking(path.token)), Effect.zipRight(manage.reschedule(path.token, payload))),
        write
      )
  }))
