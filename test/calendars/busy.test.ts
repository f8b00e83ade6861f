/**
 * The core's rules for external busy time: it cuts windows like time off (slots and the
 * check of one start agree), explain names the calendar, backoff grows to its cap, busy
 * ranges are grouped into weekly chunks, and a feed address is shown without its secret.
 */
import { describe, expect, it } from "vitest"
import { backoffMs, BUSY_CHUNK_MS, busyChunks, fetchableUrl, MAX_BACKOFF_MS, redactedUrl } from "../../src/calendars/calendar.js"
import { checkStart } from "../../src/scheduling/checks.js"
import { computeSlots } from "../../src/scheduling/slots.js"
import { at, hm, MIN, MONDAY, NOW, policy, WEEKDAYS_9_12 } from "../scheduling/fixtures.js"

const schedule = {
  staff_id: "stf_1",
  rules: [WEEKDAYS_9_12],
  occupancy: [],
  busy: [{ start: at("01 10:00"), end: at("01 10:45"), calendar_id: "cal_1" }]
}

describe("external busy time in the schedule", () => {
  it("removes the slots it overlaps and nothing else", () => {
    const starts = computeSlots({ policy: policy(), schedules: [schedule], range: MONDAY, now: NOW }).map((s) => hm(s.start))
    // Busy 10:00–10:45: the window restarts at 10:45, like after time off.
    expect(starts).toEqual(["09:00", "09:30", "10:45", "11:15"])
  })

  it("explains a refused start with external_busy and the calendar's id", () => {
    expect(checkStart({ policy: policy(), schedule, start: at("01 10:30"), now: NOW })).toEqual([
      expect.objectContaining({ code: "external_busy", calendar_id: "cal_1" })
    ])
    expect(checkStart({ policy: policy(), schedule, start: at("01 09:30"), now: NOW })).toEqual([])
  })
})

describe("calendar rules", () => {
  it("backs off from one minute, doubling, capped at six hours (or the interval when longer)", () => {
    const tenMinutes = 10 * MIN
    expect([1, 2, 3, 4].map((n) => backoffMs(n, tenMinutes))).toEqual([MIN, 2 * MIN, 4 * MIN, 8 * MIN])
    expect(backoffMs(30, tenMinutes)).toBe(MAX_BACKOFF_MS)
    expect(backoffMs(30, 24 * 60 * MIN)).toBe(24 * 60 * MIN)
  })

  it("groups ranges by the week they start in, each chunk ending at its latest end", () => {
    const week = 3000 * BUSY_CHUNK_MS
    const chunks = busyChunks({ id: "cal_1", staff_id: "stf_1" }, [
      { start: week + 1, end: week + 2 },
      { start: week + BUSY_CHUNK_MS - 5, end: week + BUSY_CHUNK_MS + 100 },
      { start: week + BUSY_CHUNK_MS, end: week + BUSY_CHUNK_MS + 10 }
    ])
    expect(chunks).toEqual([
      {
        id: `cal_1:${week}`,
        calendar_id: "cal_1",
        staff_id: "stf_1",
        from_ms: week,
        to_ms: week + BUSY_CHUNK_MS + 100,
        starts: [week + 1, week + BUSY_CHUNK_MS - 5],
        ends: [week + 2, week + BUSY_CHUNK_MS + 100]
      },
      {
        id: `cal_1:${week + BUSY_CHUNK_MS}`,
        calendar_id: "cal_1",
        staff_id: "stf_1",
        from_ms: week + BUSY_CHUNK_MS,
        to_ms: week + BUSY_CHUNK_MS + 10,
        starts: [week + BUSY_CHUNK_MS],
        ends: [week + BUSY_CHUNK_MS + 10]
      }
    ])
  })

  it("fetches webcal:// as https:// and shows only scheme and host of an address", () => {
    expect(fetchableUrl("webcal://p12-caldav.icloud.com/published/2/SECRET")).toBe("https://p12-caldav.icloud.com/published/2/SECRET")
    expect(redactedUrl("https://user:pw@calendar.google.com/calendar/ical/a%40b/private-abc/basic.ics?x=1")).toBe(
      "https://calendar.google.com/…"
    )
  })
})
