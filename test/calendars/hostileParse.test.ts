/**
 * The parse limits against the feeds of an attack on busy-time import (generated in
 * hostileFeeds.ts): steps are counted per series and per feed whatever they yield, a content
 * line is bounded in length and parameters, a feed's own time zone must repeat yearly, and a
 * refusal says where (the line) and what, never the feed's content.
 */
import { describe, expect, it } from "vitest"
import { FeedParseError, MAX_OCCURRENCES, MAX_STEPS_PER_FEED, MAX_STEPS_PER_SERIES, parseBusy } from "../../adapters/calendars/parse.js"
import { junkTimezone, millionParameters, minutely200, minutely2000, oneEvent, secondlyFrom1900 } from "./hostileFeeds.js"

const window = { start: Date.parse("2026-03-01T00:00:00Z"), end: Date.parse("2026-05-01T00:00:00Z") }

const refusal = (text: string, limits?: { readonly stepsPerFeed?: number }): FeedParseError => {
  try {
    parseBusy(text, { zone: "UTC", window, ...(limits === undefined ? {} : { limits }) })
  } catch (error) {
    expect(error).toBeInstanceOf(FeedParseError)
    return error as FeedParseError
  }
  throw new Error("the feed was read")
}

describe("parse limits", () => {
  it("keeps one rule: a series' steps count against the series and the feed, and the feed's against its budget", () => {
    expect(MAX_STEPS_PER_SERIES).toBe(20_000)
    expect(MAX_STEPS_PER_FEED).toBe(200_000)
    expect(MAX_STEPS_PER_FEED).toBeGreaterThan(MAX_STEPS_PER_SERIES)
  })

  it("ends 200 endless MINUTELY series at the cap of busy occurrences, stepping no further", () => {
    expect(parseBusy(minutely200(), { zone: "UTC", window })).toHaveLength(MAX_OCCURRENCES)
  }, 20_000)

  it("refuses endless series that step outside the window at the feed's step budget, and says where", () => {
    const error = refusal(minutely200().replaceAll("DTSTART:20260301", "DTSTART:20260201"))
    expect(error.message).toMatch(/^line \d+: the feed's recurring events need more than 200,000 steps to expand/)
  }, 20_000)

  it.each([
    ["2,000 endless MINUTELY series", minutely2000],
    ["200 SECONDLY series from 1900, which never reach the window", secondlyFrom1900]
  ])("stops %s at the feed's step budget, counting steps that add no busy time", (_, feed) => {
    const error = refusal(feed(), { stepsPerFeed: 30_000 })
    expect(error.message).toMatch(/need more than 30,000 steps/)
  })

  it("refuses a content line with a million parameters, by its line number and without its content", () => {
    const error = refusal(millionParameters())
    expect(error.message).toBe("line 6: a content line longer than 65,536 characters")
  }, 20_000)

  it("refuses a time zone of the feed's own that does not repeat yearly, before ical.js expands it", () => {
    const error = refusal(junkTimezone())
    expect(error.message).toBe("line 6: a time zone of the feed's own repeats FREQ=SECONDLY; a time zone's rules must repeat yearly")
  }, 20_000)

  it.each([
    [
      "a line without a value",
      "BEGIN:VEVENT\r\nUID:x\r\nDTSTART 20260302T090000Z-secret-token\r\nEND:VEVENT",
      "line 6: a content line without \":\" (no value)"
    ],
    [
      "a parameter without a value",
      "BEGIN:VEVENT\r\nUID:x\r\nDTSTART;TZID:secret-token\r\nEND:VEVENT",
      "line 6: a parameter without a value"
    ],
    [
      "a BEGIN without its END",
      "BEGIN:VEVENT\r\nUID:secret-token\r\nDTSTART:20260302T090000Z",
      "line 4: a component that begins and does not end"
    ],
    [
      "a rule ical.js cannot read",
      "BEGIN:VEVENT\r\nUID:x\r\nDTSTART:20260302T090000Z\r\nRRULE:FREQ=WEEKLY;BYDAY=secret-token\r\nEND:VEVENT",
      "line 7: the feed is not valid iCalendar (invalid BYDAY value)"
    ],
    [
      "too many parameters",
      `BEGIN:VEVENT\r\nUID:x\r\nDTSTART${";X-SECRET=1".repeat(21)}:20260302T090000Z\r\nEND:VEVENT`,
      "line 6: a content line with more than 20 parameters"
    ],
    [
      "a time ical.js cannot read",
      "BEGIN:VEVENT\r\nUID:x\r\nDTSTART:20260302T090000Z\r\nDURATION:secret\r\nRRULE:FREQ=DAILY;COUNT=2\r\nEND:VEVENT",
      "line 4: the event's times or recurrence cannot be read"
    ]
  ])("says where and what for %s, never the feed's content", (_, lines, message) => {
    const text = ["BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//test//EN", lines, "END:VCALENDAR"].join("\r\n")
    const error = refusal(text)
    expect(error.message).toBe(message)
    expect(error.message).not.toContain("secret")
  })

  it("still reads an ordinary feed", () => {
    expect(parseBusy(oneEvent(), { zone: "UTC", window })).toEqual([
      { start: Date.parse("2026-03-02T09:00:00Z"), end: Date.parse("2026-03-02T10:00:00Z") }
    ])
  })
})
