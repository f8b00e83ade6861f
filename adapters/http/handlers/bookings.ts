import { Effect } from "effect"
import { Bookings } from "../../../src/bookings/Bookings.js"
import type { Booking, BookingCreate } from "../../../src/bookings/booking.js"
import type { BookingSeries } from "../../../src/recurring/series.js"
import { Manage } from "../../../src/manage/Manage.js"
import { RecurringBookings } from "../../../src/recurring/RecurringBookings.js"
import type { Tenant } from "../../../src/ports/tenant.js"
import { SlotwiseApi } from "../api.js"
import { BookingCreated, PublicBookingCreated } from "../contract/bookings.js"
import { BookingSeriesCreated, PublicBookingSeriesCreated } from "../contract/series.js"
import { encodedAs } from "./encoded.js"
import { handlerGroup } from "./group.js"
import { asAudience, asPrincipal } from "./security.js"

const write = { uninterruptible: true } as const

/** The account's reads carry manage links; a publishable key (the widget, a browser) never sees them. */
const linked = <A, E, E2>(effect: Effect.Effect<A, E, Tenant>, add: (a: A) => Effect.Effect<A, E2, Tenant>) =>
  asPrincipal<A, E | E2>((p) => p.key.type === "secret" ? Effect.flatMap(effect, add) : effect)

/** A series' occurrences with their manage links, as single bookings get them. */
const seriesLinked = (manage: Manage) => (s: BookingSeries) =>
  Effect.map(manage.withManageUrls({ data: s.occurrences }), ({ data }) => ({ ...s, occurrences: data }))

/**
 * Books a series and answers 201 with it: with manage links for the account, the public view
 * for a visitor. POST /v1/booking-series, and POST /v1/bookings with `recurrence` (deprecated).
 */
const seriesCreation = Effect.gen(function*() {
  const series = yield* RecurringBookings
  const withLinks = seriesLinked(yield* Manage)
  const seriesCreated = encodedAs(BookingSeriesCreated)
  const publicSeriesCreated = encodedAs(PublicBookingSeriesCreated)
  return (payload: typeof BookingCreate.Encoded) =>
    asAudience(
      Effect.flatMap(Effect.flatMap(series.create(payload), withLinks), seriesCreated),
      (visitor) => Effect.flatMap(series.createForVisitor(payload, visitor), publicSeriesCreated)
    )
})

export const BookingsLive = handlerGroup(SlotwiseApi, "bookings", (handlers) =>
  Effect.gen(function*() {
    const bookings = yield* Bookings
    const manage = yield* Manage
    const one = <E>(effect: Effect.Effect<Booking, E, Tenant>) => linked(effect, manage.withManageUrl)
    const createSeries = yield* seriesCreation
    const bookingCreated = encodedAs(BookingCreated)
    const publicBookingCreated = encodedAs(PublicBookingCreated)
    return handlers
      .handle("list", ({ urlParams }) => linked(bookings.list(urlParams), manage.withManageUrls))
      .handle("create", ({ payload }) =>
        payload.recurrence !== undefined
          ? createSeries(payload)
          : asAudience(
            Effect.flatMap(Effect.flatMap(bookings.create(payload), manage.withManageUrl), bookingCreated),
            (visitor) => Effect.flatMap(bookings.createForVisitor(payload, visitor), publicBookingCreated)
          ), write)
      .handle("get", ({ path }) => one(bookings.get(path.id)))
      .handle("update", ({ path, payload }) => one(bookings.update(path.id, payload)), write)
      .handle("delete", ({ path }) => one(bookings.delete(path.id)), write)
      .handle("confirm", ({ path }) => one(bookings.confirm(path.id)), write)
      .handle("cancel", ({ path, payload }) => one(bookings.cancel(path.id, payload)), write)
      .handle("reschedule", ({ path, payload }) => one(bookings.reschedule(path.id, payload)), write)
      .handle("complete", ({ path }) => one(bookings.complete(path.id)), write)
      .handle("noShow", ({ path }) => one(bookings.noShow(path.id)), write)
      .handle(
        "recordPayment",
        ({ path, payload }) =>
          linked(bookings.recordPayment(path.id, payload), (r) =>
            Effect.map(manage.withManageUrl(r.booking), (booking) => ({ ...r, booking }))),
        write
      )
      .handle("listPayments", ({ path }) =>
        bookings.listPayments(path.id))
  }))

export const BookingSeriesLive = handlerGroup(SlotwiseApi, "bookingSeries", (handlers) =>
  Effect.gen(function*() {
    const series = yield* RecurringBookings
    const manage = yield* Manage
    const withLinks = seriesLinked(manage)
    const createSeries = yield* seriesCreation
    return handlers
      .handle("create", ({ payload }) => createSeries(payload), write)
      .handle("list", ({ urlParams }) =>
        linked(series.list(urlParams), (page) =>
          Effect.map(Effect.forEach(page.data, withLinks), (data) => ({ ...page, data }))))
      .handle("get", ({ path }) =>
        linked(series.get(path.id), withLinks))
      .handle("cancel", ({ path, payload }) => linked(series.cancel(path.id, payload), withLinks), write)
  }))
