/**
 * Manage links (docs/api.md §10): the account's side (a booking's link, rotating it, links on
 * booking reads) and the client's side (the booking as the client sees it, free slots, cancel,
 * reschedule), where the token is the only credential. The client's actions follow the same
 * rules and atomic checks as the account's (they run Bookings' own), plus the service's
 * cancellation notice, checked in the same transaction.
 */
import { Effect, Option } from "effect"
import { Availability } from "../availability/Availability.js"
import { Bookings } from "../bookings/Bookings.js"
import type { Booking } from "../bookings/booking.js"
import { BadRequest, InvalidTransition, NotFound, NoticePeriodPassed, type StorageFailure } from "../domain/errors.js"
import {
  clientRefusal,
  ManageCancel,
  type ManagedBooking,
  type ManageLink,
  ManageReschedule,
  ManageSlotQuery,
  manageVersionOf,
  parseToken,
  UNKNOWN_LINK_DETAIL
} from "./manageLink.js"
import type { Service } from "../services/service.js"
import { hidingOthers } from "../domain/visitor.js"
import { Domains } from "../domains/Domains.js"
import { Events } from "../events/Events.js"
import { currentStamp, findOr404 } from "../internal/resources.js"
import { decodeInput } from "../domain/validation.js"
import { makeManageLinks } from "./ManageLinks.js"
import { BookingsCollection } from "../bookings/collections.js"
import { ClientsCollection } from "../clients/collections.js"
import { ServicesCollection } from "../services/collections.js"
import { StaffCollection } from "../staff/collections.js"
import { Storage } from "../ports/storage.js"
import { Tenant, type TenantId } from "../ports/tenant.js"

/** One answer for every token that does not open a booking: unknown, rotated, malformed, foreign. */
const unknownLink = () => new NotFound({ detail: UNKNOWN_LINK_DETAIL })
/** The booking a verified token opened, and its tenant. */
export interface OpenedLink {
  readonly tenant: TenantId
  readonly booking: Booking
}

export class Manage extends Effect.Service<Manage>()("slotwise/Manage", {
  effect: Effect.gen(function*() {
    const storage = yield* Storage
    const events = yield* Events
    const bookingUseCases = yield* Bookings
    const availability = yield* Availability
    const links = yield* makeManageLinks((yield* Domains).verifiedDomainsOf)
    const bookings = storage.collection(BookingsCollection)
    const services = storage.collection(ServicesCollection)
    const staff = storage.collection(StaffCollection)
    const clients = storage.collection(ClientsCollection)
    const findBooking = findOr404(bookings, "booking")
    const decodeSlots = decodeInput(ManageSlotQuery)
    const decodeCancel = decodeInput(ManageCancel)
    const decodeReschedule = decodeInput(ManageReschedule)

    /** The booking's link as it is now (its current `manage_version`). */
    const linkOf = (booking: Booking): Effect.Effect<ManageLink, StorageFailure, Tenant> =>
      Effect.flatMap(Tenant, (tenant) => links.linkIn(tenant, booking))

    /** The booking with its `manage_url` and `manage_version`: for reads by the account only. */
    const withManageUrl = (booking: Booking): Effect.Effect<Booking, StorageFailure, Tenant> =>
      Effect.flatMap(Tenant, (tenant) => links.withManageUrl(tenant, booking))

    /** A page of bookings with their links: the base (a custom domain lookup) read once for the page. */
    const withManageUrls = <P extends { readonly data: ReadonlyArray<Booking> }>(page: P) =>
      Effect.flatMap(
        Tenant,
        (tenant) =>
          Effect.flatMap(links.baseFor(tenant), (base) =>
            Effect.map(
              Effect.forEach(page.data, (booking) => links.withManageUrl(tenant, booking, base)),
              (data) => ({ ...page, data })
            ))
      )

    /** `bookings.manageLink(id)`: the booking's current link. */
    const manageLink = (id: string) => Effect.flatMap(findBooking(id), linkOf)

    /**
     * Bumps the booking's `manage_version`: every earlier link stops working at once, on every
     * instance (each check reads the version). Records `booking.updated`.
     */
    const rotate = (id: string) =>
      Effect.flatMap(
        events.mutate(Effect.gen(function*() {
          const current = yield* findBooking(id)
          const next: Booking = { ...current, manage_version: manageVersionOf(current) + 1, updated_at: (yield* currentStamp).iso }
          yield* bookings.update(next)
          yield* events.record("booking.updated", next, { previous: current })
          return next
        })),
        withManageUrl
      )

    /**
     * The booking a token opens: its shape, then the booking it names in the tenant it names,
     * then the MAC over the booking's current version. Each failure is the same `not_found`.
     */
    const open = (token: string): Effect.Effect<OpenedLink, NotFound | StorageFailure> => {
      const claim = parseToken(token)
      if (claim === undefined) return Effect.fail(unknownLink())
      return Effect.gen(function*() {
        const booking = Option.getOrUndefined(yield* bookings.get(claim.booking_id))
        if (booking === undefined) return yield* unknownLink()
        const valid = yield* links.verify(claim.tenant, booking, claim.mac)
        if (!valid) return yield* unknownLink()
        return { tenant: claim.tenant, booking }
      }).pipe(Effect.provideService(Tenant, claim.tenant))
    }

    /** Runs `effect` as the tenant of the booking `token` opens (read in the same transaction when writing). */
    const asOpened = <A, E, R>(token: string, effect: (opened: OpenedLink) => Effect.Effect<A, E, R>) =>
      Effect.flatMap(open(token), (opened) => Effect.provideService(effect(opened), Tenant, opened.tenant))

    const serviceOf = (booking: Booking) =>
      Effect.flatMap(
        services.get(booking.service_id),
        (found) => Option.match(found, { onNone: () => Effect.fail(unknownLink()), onSome: Effect.succeed<Service> })
      )

    const viewOf = (booking: Booking) =>
      Effect.gen(function*() {
        const service = yield* serviceOf(booking)
        const member = Option.getOrUndefined(yield* staff.get(booking.staff_id))
        const client = Option.getOrUndefined(yield* clients.get(booking.client_id))
        const now = (yield* currentStamp).ms
        const cancelRefusal = clientRefusal("cancel", booking, service, now) ?? null
        const rescheduleRefusal = clientRefusal("reschedule", booking, service, now) ?? null
        const answers = (booking as { readonly answers?: ManagedBooking["answers"] }).answers
        const view: ManagedBooking = {
          object: "managed_booking",
          id: booking.id,
          status: booking.status,
          start: booking.start,
          end: booking.end,
          time_zone: client?.time_zone ?? member?.time_zone ?? "UTC",
          service: {
            name: service.name,
            duration_minutes: service.duration_minutes,
            cancellation_notice_minutes: service.cancellation_notice_minutes ?? 0
          },
          staff: { name: member?.name ?? "" },
          client: { name: client?.name ?? "" },
          ...(answers !== undefined ? { answers } : {}),
          cancellation_reason: booking.cancellation_reason,
          can_cancel: cancelRefusal === null,
          can_reschedule: rescheduleRefusal === null,
          cancel_refusal: cancelRefusal,
          reschedule_refusal: rescheduleRefusal
        }
        return view
      })

    /** Refuses the client's action when the status rules or the cancellation notice forbid it. */
    const ensureClientMay = (action: "cancel" | "reschedule", booking: Booking) =>
      Effect.gen(function*() {
        const service = yield* serviceOf(booking)
        const refusal = clientRefusal(action, booking, service, (yield* currentStamp).ms)
        if (refusal === undefined) return
        return yield* (refusal.code === "notice_period_passed"
          ? new NoticePeriodPassed({ detail: refusal.detail })
          : new InvalidTransition({ detail: refusal.detail }))
      })

    const get = (token: string) => asOpened(token, ({ booking }) => viewOf(booking))

    /** Free starts of the booking's own service and staff member. A bad range is a bad query (400). */
    const slots = (token: string, query: ManageSlotQuery) =>
      Effect.flatMap(decodeSlots(query), (range) =>
        asOpened(token, ({ booking }) =>
          availability.slots({
            service_id: booking.service_id,
            staff_id: booking.staff_id,
            start: range.start,
            end: range.end
          }))).pipe(Effect.catchTag("ValidationFailed", (e) => Effect.fail(new BadRequest({ detail: e.detail, errors: e.errors }))))

    /**
     * A client's write: the key is read first, outside the transaction (its first read may
     * insert it), then the token is checked inside, with the booking it acts on.
     */
    const clientWrite = <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.zipRight(links.deploymentKey, events.mutate(effect))

    const cancel = (token: string, input: ManageCancel = {}) =>
      Effect.flatMap(decodeCancel(input), ({ reason }) =>
        clientWrite(asOpened(token, ({ booking }) =>
          Effect.zipRight(
            ensureClientMay("cancel", booking),
            Effect.flatMap(bookingUseCases.cancel(booking.id, { reason: reason ?? null }, "client"), viewOf)
          ))))

    const reschedule = (token: string, input: ManageReschedule) =>
      Effect.flatMap(decodeReschedule(input), ({ start }) =>
        clientWrite(asOpened(token, ({ booking }) =>
          Effect.zipRight(
            ensureClientMay("reschedule", booking),
            Effect.flatMap(hidingOthers(bookingUseCases.reschedule(booking.id, { start }, "client")), viewOf)
          ))))

    return { publicBase: links.baseFor, manageLink, rotate, withManageUrl, withManageUrls, open, get, slots, cancel, reschedule } as const
  })
}) {}
