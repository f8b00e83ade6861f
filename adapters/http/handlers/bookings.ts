import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { Bookings } from "../../../src/Bookings.js"
import { SlotwiseApi } from "../api.js"
import { asAudience, asTenant } from "./security.js"

const write = { uninterruptible: true } as const

export const BookingsLive = HttpApiBuilder.group(SlotwiseApi, "bookings", (handlers) =>
  Effect.gen(function*() {
    const bookings = yield* Bookings
    return handlers
      .handle("list", ({ urlParams }) => asTenant(bookings.list(urlParams)))
      .handle("create", ({ payload }) => asAudience(bookings.create(payload), () => bookings.createForVisitor(payload)), write)
      .handle("get", ({ path }) => asTenant(bookings.get(path.id)))
      .handle("update", ({ path, payload }) => asTenant(bookings.update(path.id, payload)), write)
      .handle("delete", ({ path }) => asTenant(bookings.delete(path.id)), write)
      .handle("confirm", ({ path }) => asTenant(bookings.confirm(path.id)), write)
      .handle("cancel", ({ path, payload }) => asTenant(bookings.cancel(path.id, payload)), write)
      .handle("reschedule", ({ path, payload }) => asTenant(bookings.reschedule(path.id, payload)), write)
      .handle("complete", ({ path }) => asTenant(bookings.complete(path.id)), write)
      .handle("noShow", ({ path }) => asTenant(bookings.noShow(path.id)), write)
      .handle("recordPayment", ({ path, payload }) => asTenant(bookings.recordPayment(path.id, payload)), write)
      .handle("listPayments", ({ path }) => asTenant(bookings.listPayments(path.id)))
  }))
