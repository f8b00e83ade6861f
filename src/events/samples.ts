/**
 * Realistic sample resources for the sandbox's event triggers (docs/api.md §4 Sandbox): what a
 * subscriber would receive for each event type when no real resource is named. Fresh ids of
 * the right kind, times around `now`, and every field the real resource has, so a handler
 * written against a sample works on the real thing.
 */
import type { AvailabilityRule } from "../availability/rule.js"
import type { Booking } from "../bookings/booking.js"
import type { Calendar } from "../calendars/calendar.js"
import type { CalendarFeed } from "../calendarFeeds/calendarFeed.js"
import type { Client } from "../clients/client.js"
import type { Domain } from "../domains/domain.js"
import { formatInstant } from "../domain/common.js"
import { makeId } from "../domain/ids.js"
import type { Payment } from "../payments/payment.js"
import type { Service } from "../services/service.js"
import type { Staff } from "../staff/member.js"
import type { EventData, EventType } from "./catalogue.js"

const HOUR = 3_600_000
const DAY = 24 * HOUR

/** The resource kind an event type is about (`booking.created` → booking). */
export type SampleKind = "booking" | "payment" | "client" | "service" | "staff" | "availability" | "calendar" | "calendar_feed" | "domain"

export const kindOfEventType = (type: EventType): SampleKind => type.slice(0, type.indexOf(".")) as SampleKind

const stamps = (now: number) => ({ created_at: formatInstant(now - DAY), updated_at: formatInstant(now) })

export const sampleStaff = (now: number): Staff => ({
  id: makeId("staff", now),
  object: "staff",
  name: "Alex Morgan",
  email: "alex.morgan@example.com",
  time_zone: "Europe/Berlin",
  active: true,
  metadata: {},
  ...stamps(now)
})

export const sampleService = (now: number, staffId = makeId("staff", now)): Service => ({
  id: makeId("service", now),
  object: "service",
  name: "Haircut",
  description: "Wash, cut and style",
  duration_minutes: 45,
  buffer_before_minutes: 0,
  buffer_after_minutes: 15,
  cancellation_notice_minutes: 0,
  slot_interval_minutes: 15,
  capacity: 1,
  min_notice_minutes: 60,
  max_advance_days: 90,
  requires_confirmation: false,
  price: { amount: 4500, currency: "EUR" },
  staff_ids: [staffId],
  active: true,
  questions: [{ id: "hair_length", label: "How long is your hair?", type: "select", required: true, options: ["Short", "Medium", "Long"] }],
  reminders: null,
  metadata: {},
  assignment: "chosen",
  round_robin_policy: "least_recently_booked",
  staff_weights: {},
  ...stamps(now)
})

export const sampleClient = (now: number): Client => ({
  id: makeId("client", now),
  object: "client",
  name: "Jamie Rivera",
  email: "jamie.rivera@example.com",
  phone: "+49 30 1234567",
  time_zone: "Europe/Berlin",
  notes: null,
  metadata: {},
  ...stamps(now)
})

export const sampleAvailability = (now: number): AvailabilityRule => ({
  id: makeId("availability", now),
  object: "availability",
  staff_id: makeId("staff", now),
  type: "weekly",
  time_zone: "Europe/Berlin",
  weekdays: [1, 2, 3, 4, 5],
  start_time: "09:00",
  end_time: "17:00",
  valid_from: null,
  valid_until: null,
  metadata: {},
  ...stamps(now)
})

export const sampleBooking = (now: number): Booking => {
  // Tomorrow at 10:00 UTC, 45 minutes.
  const start = Math.floor(now / DAY) * DAY + DAY + 10 * HOUR
  return {
    id: makeId("booking", now),
    object: "booking",
    service_id: makeId("service", now),
    staff_id: makeId("staff", now),
    staff_ids: [makeId("staff", now)],
    assigned_by: "chosen",
    client_id: makeId("client", now),
    start: formatInstant(start),
    end: formatInstant(start + 45 * 60_000),
    status: "confirmed",
    notes: "First visit",
    cancellation_reason: null,
    price: { amount: 4500, currency: "EUR" },
    amount_paid: null,
    payment_status: "unpaid",
    rescheduled_from: null,
    buffer_before_minutes: 0,
    buffer_after_minutes: 15,
    answers: [{ question_id: "hair_length", label: "How long is your hair?", type: "select", value: "Medium" }],
    series_id: null,
    metadata: {},
    ...stamps(now)
  }
}

export const samplePayment = (now: number, bookingId: string): Payment => ({
  id: makeId("payment", now),
  object: "payment",
  booking_id: bookingId,
  amount: { amount: 4500, currency: "EUR" },
  reference: "ch_sample_3PzQ8x",
  metadata: {},
  ...stamps(now)
})

export const sampleCalendar = (now: number): Calendar => ({
  id: makeId("calendar", now),
  object: "calendar",
  staff_id: makeId("staff", now),
  name: "Work (Google)",
  url: "https://calendar.google.com/…",
  status: "synced",
  sync_state: "idle",
  last_synced_at: formatInstant(now),
  last_error: null,
  event_count: 12,
  next_sync_at: formatInstant(now + 10 * 60_000),
  ...stamps(now)
})

export const sampleCalendarFeed = (now: number): CalendarFeed => ({
  object: "calendar_feed",
  staff_id: makeId("staff", now),
  created_at: formatInstant(now)
})

export const sampleDomain = (now: number): Domain => ({
  id: makeId("domain", now),
  object: "domain",
  hostname: "book.example.com",
  status: "pending",
  verification: { type: "TXT", name: "_slotwise.book.example.com", value: "slotwise-verification=0123456789abcdef0123456789abcdef" },
  verified_at: null,
  ...stamps(now)
})

/** A sample of the resource an event type is about, with what the real event would carry. */
export const sampleEventData = (type: EventType, now: number): EventData => {
  switch (type) {
    case "booking.created":
      return { object: sampleBooking(now) }
    case "booking.updated": {
      const booking = sampleBooking(now)
      return { object: booking, previous: { ...booking, notes: null } }
    }
    case "booking.cancelled": {
      const booking = sampleBooking(now)
      return {
        object: { ...booking, status: "cancelled", cancellation_reason: "Client asked to cancel" },
        previous: booking
      }
    }
    case "booking.rescheduled": {
      const booking = sampleBooking(now)
      const earlier = {
        ...booking,
        start: formatInstant(Date.parse(booking.start) - DAY),
        end: formatInstant(Date.parse(booking.end) - DAY)
      }
      return { object: { ...booking, rescheduled_from: earlier.start }, previous: earlier }
    }
    case "booking.reminder":
      return { object: sampleBooking(now), offset_minutes: 60, late: false }
    case "payment.received": {
      const booking = sampleBooking(now)
      const payment = samplePayment(now, booking.id)
      return { object: payment, booking: { ...booking, amount_paid: payment.amount, payment_status: "paid" } }
    }
    case "client.created":
    case "client.deleted":
      return { object: sampleClient(now) }
    case "client.updated": {
      const client = sampleClient(now)
      return { object: client, previous: { ...client, phone: null } }
    }
    case "service.created":
    case "service.deleted":
      return { object: sampleService(now) }
    case "service.updated": {
      const service = sampleService(now)
      return { object: service, previous: { ...service, price: { amount: 4000, currency: "EUR" } } }
    }
    case "staff.created":
    case "staff.deleted":
      return { object: sampleStaff(now) }
    case "staff.updated": {
      const staff = sampleStaff(now)
      return { object: staff, previous: { ...staff, email: null } }
    }
    case "availability.created":
    case "availability.deleted":
      return { object: sampleAvailability(now) }
    case "availability.updated": {
      const rule = sampleAvailability(now)
      return { object: rule, previous: { ...rule, end_time: "16:00" } }
    }
    case "calendar.created":
    case "calendar.deleted":
      return { object: sampleCalendar(now) }
    case "calendar.updated": {
      const calendar = sampleCalendar(now)
      return {
        object: { ...calendar, status: "failing", last_error: "the feed answered HTTP 404" },
        previous: calendar
      }
    }
    case "calendar_feed.created":
    case "calendar_feed.deleted":
      return { object: sampleCalendarFeed(now) }
    case "calendar_feed.rotated": {
      const feed = sampleCalendarFeed(now)
      return { object: feed, previous: { ...feed, created_at: formatInstant(now - DAY) } }
    }
    case "domain.created":
    case "domain.deleted":
      return { object: sampleDomain(now) }
    case "domain.verified": {
      const domain = sampleDomain(now)
      return { object: { ...domain, status: "verified", verified_at: formatInstant(now) }, previous: domain }
    }
  }
}
