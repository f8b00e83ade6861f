/** The assignment rule (docs/api.md §11): ranking by policy, team slots and team verdicts. */
import { describe, expect, it } from "vitest"
import {
  blockedOccurrences,
  collectiveSlots,
  type MemberRecord,
  pickFree,
  pickLeastBlocked,
  rankMembers,
  roundRobinSlots,
  teamVerdict
} from "../../src/scheduling/assignment.js"
import type { SlotCandidate } from "../../src/scheduling/types.js"
import { at, HOUR, NOW, policy, staff, WEEKDAYS_9_12 } from "./fixtures.js"

const members = ["stf_a", "stf_b", "stf_c"]
const records = (entries: Record<string, Partial<MemberRecord>>) =>
  new Map(Object.entries(entries).map(([id, r]) => [id, { assigned: 0, upcoming: 0, ...r }]))

describe("rankMembers", () => {
  it("least_recently_booked: never booked first, then oldest latest booking; ties by service order", () => {
    const ranked = rankMembers({
      policy: "least_recently_booked",
      members,
      records: records({ stf_a: { last_booking_id: "bkg_03" }, stf_b: { last_booking_id: "bkg_01" } }),
      weights: {}
    })
    expect(ranked).toEqual(["stf_c", "stf_b", "stf_a"])
    expect(rankMembers({ policy: "least_recently_booked", members, records: new Map(), weights: {} })).toEqual(members)
  })

  it("fewest_upcoming: fewest upcoming first, ties by recency then order", () => {
    const ranked = rankMembers({
      policy: "fewest_upcoming",
      members,
      records: records({
        stf_a: { upcoming: 1, last_booking_id: "bkg_01" },
        stf_b: { upcoming: 3, last_booking_id: "bkg_00" },
        stf_c: { upcoming: 1, last_booking_id: "bkg_00" }
      }),
      weights: {}
    })
    expect(ranked).toEqual(["stf_c", "stf_a", "stf_b"])
  })

  it("weighted: the member furthest behind their share first; weight 0 last; absent weights count 50", () => {
    const ranked = rankMembers({
      policy: "weighted",
      members,
      records: records({ stf_a: { assigned: 9 }, stf_b: { assigned: 4 }, stf_c: { assigned: 0 } }),
      weights: { stf_a: 100, stf_c: 0 }
    })
    // a: 10/100 = 0.1, b: 5/50 = 0.1 (tie: b never booked... both undefined, so order), c: weight 0.
    expect(ranked).toEqual(["stf_a", "stf_b", "stf_c"])
  })

  it("follows weights over many picks when everyone is free", () => {
    const weights = { stf_a: 10, stf_b: 30, stf_c: 60 }
    const counts = new Map(members.map((id) => [id, 0]))
    for (let i = 0; i < 1000; i++) {
      const ranking = rankMembers({
        policy: "weighted",
        members,
        records: records(Object.fromEntries([...counts].map(([id, assigned]) => [id, { assigned }]))),
        weights
      })
      const picked = pickFree(ranking, members)!
      counts.set(picked, counts.get(picked)! + 1)
    }
    expect([...counts.values()]).toEqual([100, 300, 600])
  })
})

describe("pickFree", () => {
  it("takes the best ranked member who is free, or nobody", () => {
    expect(pickFree(["stf_c", "stf_a", "stf_b"], new Set(["stf_a", "stf_b"]))).toBe("stf_a")
    expect(pickFree(["stf_c"], [])).toBeUndefined()
  })
})

const slot = (start: number, staff_id: string, remaining = 1): SlotCandidate => ({ start, end: start + 30, staff_id, remaining })

describe("team slots", () => {
  const candidates = [slot(0, "stf_a"), slot(0, "stf_b"), slot(0, "stf_c"), slot(30, "stf_b"), slot(60, "stf_a", 2), slot(60, "stf_c", 3)]

  it("round robin: each start once, free members best ranked first, seats summed", () => {
    expect(roundRobinSlots(candidates, ["stf_c", "stf_b", "stf_a"])).toEqual([
      { start: 0, end: 30, staff_id: "stf_c", staff_ids: ["stf_c", "stf_b", "stf_a"], remaining: 3 },
      { start: 30, end: 60, staff_id: "stf_b", staff_ids: ["stf_b"], remaining: 1 },
      { start: 60, end: 90, staff_id: "stf_c", staff_ids: ["stf_c", "stf_a"], remaining: 5 }
    ])
  })

  it("collective: only starts every member is free at, with the fewest seats", () => {
    expect(collectiveSlots(candidates, members)).toEqual([
      { start: 0, end: 30, staff_id: "stf_a", staff_ids: members, remaining: 1 }
    ])
    expect(collectiveSlots(candidates, ["stf_a", "stf_c"])).toEqual([
      { start: 0, end: 30, staff_id: "stf_a", staff_ids: ["stf_a", "stf_c"], remaining: 1 },
      { start: 60, end: 90, staff_id: "stf_a", staff_ids: ["stf_a", "stf_c"], remaining: 2 }
    ])
    expect(collectiveSlots(candidates, [])).toEqual([])
  })
})

describe("teamVerdict", () => {
  const busy = { code: "booking_overlap" as const, detail: "Booking bkg_1 is booked", booking_id: "bkg_1" }
  const perMember = [
    { staff_id: "stf_a", reasons: [] },
    { staff_id: "stf_b", reasons: [busy] }
  ]

  it("collective: one member's reason blocks the start and names the member", () => {
    expect(teamVerdict("collective", perMember)).toEqual({ free: ["stf_a"], reasons: [{ ...busy, staff_id: "stf_b" }] })
  })

  it("round robin: anyone free is enough; nobody free gives every member's reasons", () => {
    expect(teamVerdict("round_robin", perMember)).toEqual({ free: ["stf_a"], reasons: [] })
    expect(teamVerdict("round_robin", [perMember[1]!, { staff_id: "stf_c", reasons: [busy] }]).reasons).toEqual([
      { ...busy, staff_id: "stf_b" },
      { ...busy, staff_id: "stf_c" }
    ])
  })
})

describe("series", () => {
  it("pickLeastBlocked: the first in order free at every occurrence, else the first with the fewest blocked", () => {
    const order = ["stf_c", "stf_a", "stf_b"]
    expect(pickLeastBlocked(order, new Map([["stf_a", 0], ["stf_b", 0], ["stf_c", 1]]))).toBe("stf_a")
    expect(pickLeastBlocked(order, new Map([["stf_a", 2], ["stf_b", 1], ["stf_c", 1]]))).toBe("stf_c")
    // Only counted members (those who may be booked) are candidates.
    expect(pickLeastBlocked(order, new Map([["stf_b", 3]]))).toBe("stf_b")
    expect(pickLeastBlocked(order, new Map())).toBeUndefined()
  })

  it("blockedOccurrences: each booked occurrence occupies the attendees for the later ones", () => {
    const nine = at("01 09:00")
    const schedule = (id: string) => staff([WEEKDAYS_9_12], [], id)
    // 09:00 and 09:30 for an hour each: the second overlaps the first once it is booked.
    expect(blockedOccurrences(policy({ duration: HOUR }), [schedule("stf_a"), schedule("stf_b")], [nine, nine + HOUR / 2], NOW)).toBe(1)
    expect(blockedOccurrences(policy({ duration: HOUR }), [schedule("stf_a")], [nine, nine + HOUR], NOW)).toBe(0)
    // A start outside the hours is blocked, and frees nothing for the next.
    expect(blockedOccurrences(policy(), [schedule("stf_a")], [at("01 08:00"), nine], NOW)).toBe(1)
  })
})
