/** The public views of staff and services: the function a visitor's read uses shows exactly what the schema documents. */
import { Schema } from "effect"
import { describe, expect, it } from "vitest"
import { PublicService, publicService, Service } from "../../src/services/service.js"
import { PublicStaff, publicStaff, Staff } from "../../src/staff/member.js"

const stamps = { created_at: "2026-01-05T09:00:00Z", updated_at: "2026-01-05T09:00:00Z" }

const staff = Schema.decodeUnknownSync(Staff)({
  id: "stf_01JQ4Z8X9V3K7M2N5P6R8T0W1Y",
  object: "staff",
  name: "Ada",
  email: "ada@example.com",
  time_zone: "Europe/Berlin",
  active: true,
  metadata: { desk: "3" },
  ...stamps
})

const service = Schema.decodeUnknownSync(Service)({
  id: "svc_01JQ4Z8X9V3K7M2N5P6R8T0W1Y",
  object: "service",
  name: "Haircut",
  description: null,
  duration_minutes: 30,
  buffer_before_minutes: 0,
  buffer_after_minutes: 0,
  slot_interval_minutes: 30,
  capacity: 1,
  min_notice_minutes: 0,
  max_advance_days: 60,
  cancellation_notice_minutes: 0,
  requires_confirmation: false,
  price: null,
  staff_ids: ["stf_01JQ4Z8X9V3K7M2N5P6R8T0W1Y"],
  active: true,
  questions: [],
  reminders: null,
  max_occurrences: 0,
  metadata: { internal: "yes" },
  assignment: "chosen",
  round_robin_policy: "least_recently_booked",
  staff_weights: {},
  ...stamps
})

describe("public views", () => {
  it("a staff member as a visitor sees them has the public schema's fields, in the stored order", () => {
    const shown = publicStaff(staff)
    expect(Object.keys(shown).sort()).toEqual(Object.keys(PublicStaff.fields).sort())
    expect(Object.keys(shown)).toEqual(Object.keys(staff).filter((key) => key in PublicStaff.fields))
    expect(Schema.decodeUnknownSync(PublicStaff)(shown)).toEqual(shown)
  })

  it("a service as a visitor sees it has the public schema's fields, in the stored order", () => {
    const shown = publicService(service)
    expect(Object.keys(shown).sort()).toEqual(Object.keys(PublicService.fields).sort())
    expect(Object.keys(shown)).toEqual(Object.keys(service).filter((key) => key in PublicService.fields))
  })
})
