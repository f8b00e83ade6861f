/** Manage links through the library: the token, rotation, the client's view and actions, and who acted. */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { vi } from "vitest"
import { makeNodeManageLinkMac } from "../../adapters/crypto/manageLinkMac.js"
import { createTestScheduling } from "../../index.js"
import type { Booking } from "../../src/bookings/booking.js"
import { parseToken } from "../../src/manage/manageLink.js"
import { makeManageLinks } from "../../src/manage/ManageLinks.js"
import { ManageLinkMac, webCryptoManageLinkMac } from "../../src/ports/manageLinks.js"
import type { TenantId } from "../../src/ports/tenant.js"
import { CoreTest } from "../support/coreTest.js"
import { at, failure, MONDAY_9, NOW, salon } from "../support/fixtures.js"

const PUBLIC = "https://book.example.com"

const booked = async (service: Record<string, unknown> = {}) => {
  const s = await createTestScheduling({ now: NOW, publicUrl: `${PUBLIC}/` })
  const fixture = await salon(service, s)
  const booking = await s.bookings.create({
    service_id: fixture.serviceId,
    staff_id: fixture.staffId,
    client_id: fixture.clientId,
    start: MONDAY_9
  })
  return { ...fixture, booking }
}

/** The same token with one MAC character changed: same length, wrong MAC. */
const tampered = (token: string) => token.slice(0, -1) + (token.endsWith("A") ? "B" : "A")

describe("manage links", () => {
  it("gives a booking an unguessable link under the public URL that opens only that booking", async () => {
    const { s, booking } = await booked()
    const link = await s.bookings.manageLink(booking.id)
    expect(link.url).toBe(`${PUBLIC}/manage/${link.token}`)
    // 192 bits of MAC after the booking and the tenant.
    expect(link.token).toMatch(/^[0-9A-Z]{26}\.[0-9A-Z]{26}\.t[A-Za-z0-9_-]{32}$/)
    expect(link.token.startsWith(booking.id.slice(4))).toBe(true)
    expect(await s.bookings.manageLink(booking.id)).toEqual(link)

    const view = await s.manage.get(link.token)
    expect(view).toMatchObject({
      object: "managed_booking",
      id: booking.id,
      status: "confirmed",
      start: MONDAY_9,
      end: at(MONDAY_9, 30),
      time_zone: "Europe/Berlin",
      service: { name: "Haircut", duration_minutes: 30, cancellation_notice_minutes: 0 },
      staff: { name: "Ana" },
      client: { name: "Bo" },
      can_cancel: true,
      can_reschedule: true,
      cancel_refusal: null,
      reschedule_refusal: null
    })
    // The client's view names no other resource and no account data.
    expect(JSON.stringify(view)).not.toMatch(/stf_|svc_|cli_|acc_|bo@example/)
  })

  it("never opens another booking, another tenant's booking, or a tampered token, with one answer for all", async () => {
    const { s, booking, serviceId, staffId, clientId } = await booked()
    const other = await s.bookings.create({ service_id: serviceId, staff_id: staffId, client_id: clientId, start: at(MONDAY_9, 60) })
    const mine = (await s.bookings.manageLink(booking.id)).token
    const theirs = (await s.bookings.manageLink(other.id)).token
    // This booking's MAC on the other booking's id, and the other way round.
    const swapped = other.id.slice(4) + mine.slice(26)
    // The same booking id claimed in another account and in production.
    const otherAccount = mine.slice(0, 27) + "0".repeat(25) + "1" + mine.slice(53)
    const production = mine.slice(0, 54) + "l" + mine.slice(55)
    const answers = await Promise.all(
      [swapped, otherAccount, production, tampered(mine), `${mine}x`, mine.slice(0, -1), "", "\u0000".repeat(87), "x".repeat(5000)]
        .map((token) => failure(s.manage.get(token)))
    )
    for (const answer of answers)
      expect(answer).toMatchObject({ code: "not_found", status: 404, detail: "no booking for this manage link" })
    expect(await failure(s.manage.cancel(swapped, {}))).toMatchObject({ code: "not_found" })
    expect((await s.bookings.get(other.id)).status).toBe("confirmed")
    expect((await s.manage.get(theirs)).id).toBe(other.id)
  })

  it("rotation kills every earlier link and gives the booking a new one", async () => {
    const { s, booking } = await booked()
    const first = await s.bookings.manageLink(booking.id)
    const rotated = await s.bookings.rotateManageLink(booking.id)
    expect(rotated.manage_version).toBe(2)
    const second = await s.bookings.manageLink(booking.id)
    expect(rotated.manage_url).toBe(second.url)
    expect(second.token).not.toBe(first.token)
    expect(await failure(s.manage.get(first.token))).toMatchObject({ code: "not_found" })
    expect(await failure(s.manage.cancel(first.token, {}))).toMatchObject({ code: "not_found" })
    expect((await s.manage.get(second.token)).id).toBe(booking.id)
    const [event] = (await s.events.list({ types: ["booking.updated"] })).data
    expect(event!.data.object).toMatchObject({ id: booking.id, manage_version: 2 })
  })

  it("lets the client cancel with a reason, recorded as the client's act; a cancelled booking is final", async () => {
    const { s, booking } = await booked()
    const { token } = await s.bookings.manageLink(booking.id)
    const view = await s.manage.cancel(token, { reason: "sick" })
    expect(view).toMatchObject({
      status: "cancelled",
      cancellation_reason: "sick",
      can_cancel: false,
      cancel_refusal: { code: "invalid_transition" }
    })
    const [event] = (await s.events.list({ types: ["booking.cancelled"] })).data
    expect(event!.data).toMatchObject({ actor: "client", object: { id: booking.id, status: "cancelled" } })
    expect(await failure(s.manage.cancel(token, {}))).toMatchObject({ code: "invalid_transition", status: 409 })
    expect(await failure(s.manage.reschedule(token, { start: at(MONDAY_9, 60) }))).toMatchObject({ code: "invalid_transition" })
  })

  it("lets the client move the booking to a free start of the same service and staff, with the same checks", async () => {
    const { s, booking, serviceId, staffId, clientId } = await booked()
    const { token } = await s.bookings.manageLink(booking.id)
    const slots = await s.manage.slots(token, { start: MONDAY_9, end: at(MONDAY_9, 120) })
    expect(slots.data.map((slot) => slot.start)).toEqual([at(MONDAY_9, 30), at(MONDAY_9, 60), at(MONDAY_9, 90)])
    expect(slots.data.every((slot) => slot.staff_id === staffId)).toBe(true)

    await s.bookings.create({ service_id: serviceId, staff_id: staffId, client_id: clientId, start: at(MONDAY_9, 60) })
    expect(await failure(s.manage.reschedule(token, { start: at(MONDAY_9, 60) }))).toMatchObject({ code: "slot_unavailable" })
    expect(await failure(s.manage.reschedule(token, { start: "2027-03-28T07:00:00Z" }))).toMatchObject({ code: "outside_availability" })

    const moved = await s.manage.reschedule(token, { start: at(MONDAY_9, 90) })
    expect(moved).toMatchObject({ start: at(MONDAY_9, 90), status: "confirmed" })
    const [event] = (await s.events.list({ types: ["booking.rescheduled"] })).data
    expect(event!.data).toMatchObject({ actor: "client", previous: { start: MONDAY_9 } })
    // The same link still opens the moved booking (moving does not rotate it).
    expect((await s.manage.get(token)).start).toBe(at(MONDAY_9, 90))
  })

  it("records the account as the actor of its own cancels and reschedules", async () => {
    const { s, booking, serviceId, staffId, clientId } = await booked()
    await s.bookings.reschedule(booking.id, { start: at(MONDAY_9, 30) })
    const second = await s.bookings.create({ service_id: serviceId, staff_id: staffId, client_id: clientId, start: at(MONDAY_9, 120) })
    await s.bookings.delete(second.id)
    const events = (await s.events.list({ types: ["booking.rescheduled", "booking.cancelled"] })).data
    expect(events.map((e) => [e.type, e.data.actor])).toEqual([["booking.rescheduled", "account"], ["booking.cancelled", "account"]])
  })

  it("refuses a client's cancel or move within the service's cancellation notice, and says so in the view", async () => {
    const { s, booking } = await booked({ cancellation_notice_minutes: 24 * 60 })
    const { token } = await s.bookings.manageLink(booking.id)
    expect((await s.manage.get(token)).can_cancel).toBe(true)
    // Monday 07:00Z minus 24 h is Sunday 07:00Z: one minute later the notice has passed.
    await s.clock.set("2027-03-28T07:01:00Z")
    const view = await s.manage.get(token)
    expect(view).toMatchObject({
      can_cancel: false,
      can_reschedule: false,
      cancel_refusal: { code: "notice_period_passed" },
      reschedule_refusal: { code: "notice_period_passed" }
    })
    expect(await failure(s.manage.cancel(token, {}))).toMatchObject({ code: "notice_period_passed", status: 409 })
    expect(await failure(s.manage.reschedule(token, { start: at(MONDAY_9, 60) }))).toMatchObject({ code: "notice_period_passed" })
    // The account is not bound by it.
    expect((await s.bookings.cancel(booking.id, {})).status).toBe("cancelled")
  })

  it("validates the client's input", async () => {
    const { s, booking } = await booked()
    const { token } = await s.bookings.manageLink(booking.id)
    expect(await failure(s.manage.cancel(token, { reason: "x".repeat(1001) }))).toMatchObject({ code: "validation_failed" })
    expect(await failure(s.manage.reschedule(token, { start: "soon" } as never))).toMatchObject({ code: "validation_failed" })
  })

  it("a tenant's facade opens links of any tenant (the token names its own), and not a deleted booking", async () => {
    const { s, booking } = await booked()
    const { token } = await s.bookings.manageLink(booking.id)
    const elsewhere = s.tenant({ account_id: `acc_${"1".repeat(26)}`, environment: "production" })
    expect((await elsewhere.manage.get(token)).id).toBe(booking.id)
    await s.sandbox.reset()
    expect(await failure(s.manage.get(token))).toMatchObject({ code: "not_found" })
  })
})

describe("manage-link MACs", () => {
  const key = new Uint8Array(32).fill(7)

  it.effect("Node's verifier compares equal-length MACs with timingSafeEqual and refuses a wrong one", () =>
    Effect.gen(function*() {
      const { timingSafeEqual } = yield* Effect.promise(() => import("node:crypto"))
      const equal = vi.fn(timingSafeEqual)
      const mac = makeNodeManageLinkMac(equal)
      const right = yield* mac.sign(key, "message", 24)
      const wrong = tampered(right)
      expect(wrong).toHaveLength(right.length)
      expect(yield* mac.verify(key, "message", wrong, 24)).toBe(false)
      expect(equal).toHaveBeenCalledTimes(1)
      expect(yield* mac.verify(key, "message", right, 24)).toBe(true)
      expect(equal).toHaveBeenCalledTimes(2)
      // Another message under the same key, and the same message under another key, do not verify.
      expect(yield* mac.verify(key, "message2", right, 24)).toBe(false)
      expect(yield* mac.verify(new Uint8Array(32), "message", right, 24)).toBe(false)
    }))

  it.effect("the WebCrypto default and Node's adapter compute the same MAC", () =>
    Effect.gen(function*() {
      const node = makeNodeManageLinkMac()
      const fromNode = yield* node.sign(key, "slotwise", 24)
      expect(yield* webCryptoManageLinkMac.sign(key, "slotwise", 24)).toBe(fromNode)
      expect(yield* webCryptoManageLinkMac.verify(key, "slotwise", tampered(fromNode), 24)).toBe(false)
    }))

  it.effect("signs a booking's link once: read again it is the same link, unsigned; rotated, it is signed anew", () =>
    Effect.gen(function*() {
      const node = makeNodeManageLinkMac()
      const sign = vi.fn(node.sign)
      const links = yield* makeManageLinks().pipe(Effect.provideService(ManageLinkMac, { ...node, sign }))
      const tenant: TenantId = { account_id: "acc_01M84X9MJPREH7HYNSVRASAFDA", environment: "sandbox" }
      const booking = { id: "bkg_01M84X9MJPREH7HYNSVRASAFDA", manage_version: 1 } as Booking
      const first = yield* links.linkIn(tenant, booking)
      expect(yield* links.linkIn(tenant, booking)).toEqual(first)
      expect(sign).toHaveBeenCalledTimes(1)
      const rotated = yield* links.linkIn(tenant, { ...booking, manage_version: 2 })
      expect(rotated.token).not.toBe(first.token)
      expect(sign).toHaveBeenCalledTimes(2)
      // Each MAC still verifies against its own version only.
      const mac = parseToken(first.token)!.mac
      expect(yield* links.verify(tenant, booking, mac)).toBe(true)
      expect(yield* links.verify(tenant, { ...booking, manage_version: 2 }, mac)).toBe(false)
    }).pipe(Effect.provide(CoreTest)))
})
