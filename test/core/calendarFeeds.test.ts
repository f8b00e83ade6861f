/**
 * Calendar feeds through the library: which bookings a feed shows and how (UID, SEQUENCE,
 * STATUS, times, text), the window in time on a controlled clock, rotation and deletion,
 * tenants, and the rendered text read back with a strict parser.
 */
import { describe, expect, it } from "vitest"
import { createTestScheduling } from "../../index.js"
import { at, failure, MONDAY_9, NOW, salon } from "../support/fixtures.js"
import { expectWellFormed, parseFeed } from "../support/ical.js"

const DAY = 86_400_000
const tokenOf = (url: string) => /\/calendar\/([A-Za-z0-9_-]{43})\.ics$/.exec(url)![1]!

describe("a staff member's feed", () => {
  it("shows each pending or confirmed booking as one VEVENT that parses strictly and round-trips its times", async () => {
    const { s, staffId, serviceId, clientId } = await salon(
      {},
      await createTestScheduling({ now: NOW, publicUrl: "https://book.example.com/" })
    )
    const confirmed = await s.bookings.create({ service_id: serviceId, staff_id: staffId, client_id: clientId, start: MONDAY_9 })
    const gated = await s.services.create({ name: "Colour", duration_minutes: 60, staff_ids: [staffId], requires_confirmation: true })
    const pending = await s.bookings.create({ service_id: gated.id, staff_id: staffId, client_id: clientId, start: at(MONDAY_9, 60) })
    const created = await s.calendarFeeds.create(staffId)
    expect(created).toMatchObject({ object: "calendar_feed", staff_id: staffId, created_at: NOW })
    expect(created.url).toMatch(/^https:\/\/book\.example\.com\/calendar\/[A-Za-z0-9_-]{43}\.ics$/)

    const { body, etag } = await s.calendarFeeds.render(tokenOf(created.url))
    expectWellFormed(body)
    const feed = parseFeed(body)
    expect(feed).toMatchObject({ name: "Ana", refresh: "PT15M", ttl: "PT15M" })
    expect(feed.events).toEqual([
      {
        uid: `${confirmed.id}@book.example.com`,
        sequence: 0,
        status: "CONFIRMED",
        start: MONDAY_9,
        end: at(MONDAY_9, 30),
        stamp: NOW,
        lastModified: NOW,
        summary: "Haircut: Bo",
        description: null
      },
      expect.objectContaining({
        uid: `${pending.id}@book.example.com`,
        status: "TENTATIVE",
        start: at(MONDAY_9, 60),
        end: at(MONDAY_9, 120),
        summary: "Colour: Bo"
      })
    ])
    expect(etag).toMatch(/^"[0-9a-f]{32}"$/)
    // Nothing changed: the same bytes, the same ETag, however often it is read.
    expect(await s.calendarFeeds.render(tokenOf(created.url))).toEqual({ body, etag })
    await s.close()
  })

  it("escapes hostile notes and folds long multi-byte text at 75 octets without splitting a character", async () => {
    const { s, staffId, serviceId, clientId } = await salon()
    const notes = `line one\r\nline two\nsemi; comma, backslash \\ done ` + "Grüße 🙂 ".repeat(40)
    await s.bookings.create({ service_id: serviceId, staff_id: staffId, client_id: clientId, start: MONDAY_9, notes })
    const feed = await s.calendarFeeds.create(staffId)
    const { body } = await s.calendarFeeds.render(tokenOf(feed.url))
    const lines = expectWellFormed(body)
    expect(lines.filter((l) => l.startsWith(" ")).length).toBeGreaterThan(5)
    expect(body).toContain("DESCRIPTION:line one\\nline two\\nsemi\\; comma\\, backslash \\\\ done")
    expect(parseFeed(body).events[0]!.description).toBe(notes.replace("\r\n", "\n"))
    // A NUL never gets this far: the booking is refused.
    expect(
      await failure(
        s.bookings.create({ service_id: serviceId, staff_id: staffId, client_id: clientId, start: at(MONDAY_9, 60), notes: "a\u0000b" })
      )
    )
      .toMatchObject({ status: 422 })
    await s.close()
  })

  it("raises SEQUENCE on every change and keeps a cancelled booking as CANCELLED for 30 days after the cancellation", async () => {
    const { s, staffId, serviceId, clientId } = await salon()
    const booking = await s.bookings.create({ service_id: serviceId, staff_id: staffId, client_id: clientId, start: MONDAY_9 })
    const token = tokenOf((await s.calendarFeeds.create(staffId)).url)
    const only = async () => {
      const events = parseFeed((await s.calendarFeeds.render(token)).body).events
      expect(events.length).toBeLessThanOrEqual(1)
      return events[0]
    }
    expect((await only())!.sequence).toBe(0)

    await s.clock.advance({ minutes: 5 })
    await s.bookings.update(booking.id, { notes: "bring photos" })
    expect(await only()).toMatchObject({ sequence: 1, description: "bring photos", lastModified: at(NOW, 5), stamp: at(NOW, 5) })
    await s.bookings.reschedule(booking.id, { start: at(MONDAY_9, 60) })
    expect(await only()).toMatchObject({ sequence: 2, start: at(MONDAY_9, 60), status: "CONFIRMED" })
    const cancelled = await s.bookings.cancel(booking.id, { reason: "ill" })
    expect(cancelled.revision).toBe(3)
    expect(await only()).toMatchObject({ sequence: 3, status: "CANCELLED", uid: `${booking.id}@127.0.0.1` })

    // 30 days after the cancellation it is still there; a moment later it is gone.
    await s.clock.advance({ days: 30 })
    expect((await only())?.status).toBe("CANCELLED")
    await s.clock.advance({ milliseconds: 1 })
    expect(await only()).toBeUndefined()
    await s.close()
  })

  it("covers 30 days back to the largest booking horizon of the staff member's services", async () => {
    const { s, staffId, serviceId, clientId } = await salon({ max_advance_days: 10 })
    const soon = await s.bookings.create({ service_id: serviceId, staff_id: staffId, client_id: clientId, start: MONDAY_9 })
    // Booked through a service with a longer horizon, then that service's horizon shrinks.
    const long = await s.services.create({ name: "Perm", duration_minutes: 30, staff_ids: [staffId], max_advance_days: 60 })
    const later = await s.bookings.create({
      service_id: long.id,
      staff_id: staffId,
      client_id: clientId,
      start: at(MONDAY_9, 50 * 24 * 60)
    })
    const token = tokenOf((await s.calendarFeeds.create(staffId)).url)
    const uids = async () => parseFeed((await s.calendarFeeds.render(token)).body).events.map((e) => e.uid.split("@")[0])
    expect(await uids()).toEqual([soon.id, later.id])
    await s.services.update(long.id, { max_advance_days: 20 })
    expect(await uids()).toEqual([soon.id])

    // A past booking stays for 30 days after its start.
    await s.clock.set(new Date(Date.parse(MONDAY_9) + 30 * DAY).toISOString())
    expect(await uids()).toContain(soon.id)
    await s.clock.advance({ milliseconds: 1 })
    expect(await uids()).not.toContain(soon.id)
    await s.close()
  })
})

describe("the feed's URL", () => {
  it("is replaced by a new one on every create, ends on delete, and is never shown again", async () => {
    const { s, staffId, serviceId, clientId } = await salon()
    await s.bookings.create({ service_id: serviceId, staff_id: staffId, client_id: clientId, start: MONDAY_9 })
    const first = await s.calendarFeeds.create(staffId)
    const second = await s.calendarFeeds.create(staffId)
    expect(tokenOf(second.url)).not.toBe(tokenOf(first.url))
    expect(await failure(s.calendarFeeds.render(tokenOf(first.url)))).toMatchObject({
      status: 404,
      detail: "no calendar feed at this address"
    })
    expect(parseFeed((await s.calendarFeeds.render(tokenOf(second.url))).body).events).toHaveLength(1)

    const state = await s.calendarFeeds.get(staffId)
    expect(state).toEqual({ object: "calendar_feed", staff_id: staffId, created_at: NOW })
    expect(JSON.stringify(state)).not.toContain(tokenOf(second.url))
    const events = JSON.stringify((await s.events.list()).data)
    expect(events).not.toContain(tokenOf(second.url))

    expect(await s.calendarFeeds.delete(staffId)).toEqual(state)
    expect(await failure(s.calendarFeeds.get(staffId))).toMatchObject({ status: 404 })
    expect(await failure(s.calendarFeeds.delete(staffId))).toMatchObject({ status: 404 })
    expect(await failure(s.calendarFeeds.render(tokenOf(second.url)))).toMatchObject({
      status: 404,
      detail: "no calendar feed at this address"
    })
    for (const malformed of ["", "short", "a".repeat(42) + "\u0000", "../" + "a".repeat(40)]) {
      expect(await failure(s.calendarFeeds.render(malformed))).toMatchObject({ status: 404, detail: "no calendar feed at this address" })
    }
    await s.close()
  })

  it("ends when its staff member is deleted; another staff member's id answers 404", async () => {
    const { s, staffId } = await salon()
    const spare = await s.staff.create({ name: "Eli", time_zone: "UTC" })
    const token = tokenOf((await s.calendarFeeds.create(spare.id)).url)
    expect(parseFeed((await s.calendarFeeds.render(token)).body).name).toBe("Eli")
    expect(await failure(s.calendarFeeds.get(staffId))).toMatchObject({
      status: 404,
      detail: `staff member ${staffId} has no calendar feed`
    })
    expect(await failure(s.calendarFeeds.create("stf_01J00000000000000000000000"))).toMatchObject({ status: 404 })
    await s.staff.delete(spare.id)
    expect(await failure(s.calendarFeeds.render(token))).toMatchObject({ status: 404 })
    await s.close()
  })
})

describe("the account's feed", () => {
  it("shows every staff member's bookings of its tenant, and no other tenant's", async () => {
    const s = await createTestScheduling({ now: NOW })
    const a = s.tenant({ account_id: "acc_01J0000000000000000000000A", environment: "sandbox" })
    const b = s.tenant({ account_id: "acc_01J0000000000000000000000B", environment: "sandbox" })
    const inA = await salon({}, a as never)
    const second = await a.staff.create({ name: "Eli", time_zone: "Europe/Berlin" })
    await a.availability.create({ staff_id: second.id, type: "weekly", weekdays: [1], start_time: "09:00", end_time: "17:00" })
    await a.services.update(inA.serviceId, { staff_ids: [inA.staffId, second.id] })
    const one = await a.bookings.create({ service_id: inA.serviceId, staff_id: inA.staffId, client_id: inA.clientId, start: MONDAY_9 })
    const two = await a.bookings.create({ service_id: inA.serviceId, staff_id: second.id, client_id: inA.clientId, start: MONDAY_9 })
    const inB = await salon({}, b as never)
    const theirs = await b.bookings.create({ service_id: inB.serviceId, staff_id: inB.staffId, client_id: inB.clientId, start: MONDAY_9 })

    const feedA = await a.calendarFeeds.createForAccount()
    expect(feedA.staff_id).toBeNull()
    const parsed = parseFeed((await a.calendarFeeds.render(tokenOf(feedA.url))).body)
    expect(parsed.name).toBe("Bookings (sandbox)")
    expect(parsed.events.map((e) => e.uid.split("@")[0]).sort()).toEqual([one.id, two.id].sort())

    const feedB = await b.calendarFeeds.create(inB.staffId)
    const shownB = parseFeed((await b.calendarFeeds.render(tokenOf(feedB.url))).body).events.map((e) => e.uid.split("@")[0])
    expect(shownB).toEqual([theirs.id])
    // One tenant's staff id means nothing in another, and its feed state is its own.
    expect(await failure(b.calendarFeeds.create(inA.staffId))).toMatchObject({ status: 404 })
    expect(await failure(b.calendarFeeds.getForAccount())).toMatchObject({ status: 404 })
    expect(await failure(b.calendarFeeds.deleteForAccount())).toMatchObject({ status: 404 })
    expect((await a.calendarFeeds.deleteForAccount()).staff_id).toBeNull()
    expect(await failure(a.calendarFeeds.render(tokenOf(feedA.url)))).toMatchObject({ status: 404 })
    await s.close()
  })
})
