/** gridPlace (src/scheduling/slots.ts): where a start lies against the grid the slots step along. */
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { gridPlace } from "../../src/scheduling/slots.js"
import { MIN, HOUR, at, weekly, blocked, policy, booking, staff, NOW, MONDAY, slotsOn } from "./fixtures.js"

describe("gridPlace", () => {
  it("is on the grid for every start the slots offer, off it between them with the starts around, and outside off hours", () => {
    const s = staff([weekly([1], "09:10", "12:00")])
    expect(gridPlace(policy(), s, at("01 09:40"))).toBe("on")
    expect(gridPlace(policy(), s, at("01 10:07"))).toEqual([at("01 09:40"), at("01 10:10")])
    // 11:35: the next grid start (11:40) would end after the window, so only 11:10 is offered.
    expect(gridPlace(policy(), s, at("01 11:35"))).toEqual([at("01 11:10")])
    expect(gridPlace(policy(), s, at("01 08:00"))).toBe("outside")
    expect(gridPlace(policy(), s, at("01 12:00"))).toBe("outside")
    // Without an interval the service's duration is the step.
    expect(gridPlace(policy({ interval: 0, duration: HOUR }), s, at("01 10:10"))).toBe("on")
    expect(gridPlace(policy({ interval: 0, duration: HOUR }), s, at("01 09:40"))).toEqual([at("01 09:10"), at("01 10:10")])
  })

  it("agrees with the slots: every start they offer is on the grid, whatever is booked or blocked", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 59 }),
        fc.constantFrom(15, 20, 30, 45),
        fc.integer({ min: 0, max: 10 }),
        (offset, step, bookedAt) => {
          const s = staff(
            [weekly([1], "08:00", "18:00"), blocked("avl_b", at("01 12:00") + offset * MIN, at("01 13:00"))],
            [booking("bkg_1", at("01 09:00") + bookedAt * 15 * MIN, 30)]
          )
          const p = policy({ interval: step * MIN })
          for (const slot of slotsOn(s, p, MONDAY, NOW)) expect(gridPlace(p, s, slot.start)).toBe("on")
        }
      ),
      { numRuns: 50 }
    )
  })
})
