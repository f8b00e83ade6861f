/** A visitor's limits on holds and bookings: each refusal is built whole by the core, ready to fail with. */
import { describe, expect, it } from "vitest"
import { HoldLimitReached, RateLimited } from "../../src/domain/errors.js"
import { VISITOR_HOLDS_PER_ADDRESS, visitorHoldRefusal } from "../../src/availability/hold.js"
import { VISITOR_OCCURRENCES_PER_ADDRESS_PER_DAY, visitorBookingRefusal } from "../../src/domain/visitor.js"

const visitor = { key_id: "pk_1", address: "203.0.113.7" }

describe("a visitor's refusals", () => {
  it("a hold past the address's share is refused with hold_limit_reached; one within it is not", () => {
    const own = Array.from({ length: VISITOR_HOLDS_PER_ADDRESS }, () => visitor.address)
    const refusal = visitorHoldRefusal(visitor, own, 20)
    expect(refusal).toBeInstanceOf(HoldLimitReached)
    expect(refusal?.detail).toMatch(/^this client address already holds \d+ slots with this key/)
    expect(visitorHoldRefusal(visitor, own.slice(1), 20)).toBeUndefined()
    expect(visitorHoldRefusal(visitor, ["198.51.100.1"], 1)).toBeInstanceOf(HoldLimitReached)
  })

  it("a booking past the address's day is refused with rate_limited, with the wait until the day ends", () => {
    const booked = Array.from({ length: VISITOR_OCCURRENCES_PER_ADDRESS_PER_DAY }, () => visitor.address)
    const refusal = visitorBookingRefusal(visitor, booked, 1, Date.UTC(2026, 0, 5, 23, 0))
    expect(refusal).toBeInstanceOf(RateLimited)
    expect(refusal?.retry_after_seconds).toBe(3600)
  })
})
