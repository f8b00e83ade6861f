/**
 * The feed parser on hand-written feeds in the shapes Google, Outlook and Apple publish:
 * exact busy ranges, recurrence with exceptions and overrides, zones (IANA, Windows names,
 * a feed's own VTIMEZONE), floating times and all-day dates, across DST changes.
 */
import { readFileSync } from "node:fs"
import { describe, expect, it } from "vitest"
import { FeedParseError, MAX_ITERATIONS_PER_EVENT, parseBusy } from "../../adapters/calendars/parse.js"

const fixture = (name: string) => readFileSync(new URL(`./fixtures/${name}`, import.meta.url), "utf8")
const window = { start: Date.parse("2026-03-01T00:00:00Z"), end: Date.parse("2026-05-01T00:00:00Z") }

const ranges = (text: string, zone: string, within = window) =>
  parseBusy(text, { zone, window: within })
    .sort((a, b) => a.start - b.start)
    .map((r) => [new Date(r.start).toISOString(), new Date(r.end).toISOString()])

describe("parseBusy", () => {
  it("reads a Google feed: UTC times, EXDATE, a moved and a cancelled occurrence, all-day, transparent", () => {
    expect(ranges(fixture("google.ics"), "Europe/Berlin")).toEqual([
      ["2026-03-02T09:00:00.000Z", "2026-03-02T10:00:00.000Z"],
      ["2026-03-03T09:00:00.000Z", "2026-03-03T10:00:00.000Z"],
      // 03-04 is an EXDATE; 03-05 moved to 13:00; 03-06 cancelled by its override.
      ["2026-03-05T13:00:00.000Z", "2026-03-05T14:00:00.000Z"],
      ["2026-03-07T09:00:00.000Z", "2026-03-07T10:00:00.000Z"],
      // The all-day event covers 10 March in Berlin (UTC+1); the transparent and the cancelled events block nothing.
      ["2026-03-09T23:00:00.000Z", "2026-03-10T23:00:00.000Z"]
    ])
  })

  it("reads an Outlook feed: Windows zone names, a weekly series across Europe's DST change, UNTIL in UTC", () => {
    expect(ranges(fixture("outlook.ics"), "UTC")).toEqual([
      // Eastern Standard Time: 15:00 is UTC−5 before 8 March, UTC−4 after.
      ["2026-03-05T20:00:00.000Z", "2026-03-05T21:00:00.000Z"],
      ["2026-03-10T19:00:00.000Z", "2026-03-10T20:00:00.000Z"],
      // W. Europe Standard Time 09:00: UTC+1 on 23 March, UTC+2 from 29 March; UNTIL keeps 6 April.
      ["2026-03-23T08:00:00.000Z", "2026-03-23T09:00:00.000Z"],
      ["2026-03-30T07:00:00.000Z", "2026-03-30T08:00:00.000Z"],
      ["2026-04-06T07:00:00.000Z", "2026-04-06T08:00:00.000Z"]
    ])
  })

  it("reads an Apple feed: VTIMEZONE blocks, X-APPLE properties, a floating time in the staff member's zone", () => {
    expect(ranges(fixture("apple.ics"), "America/New_York")).toEqual([
      // Los Angeles 10:00–11:30: PST (UTC−8) on 6 March, PDT (UTC−7) on 13 March.
      ["2026-03-06T18:00:00.000Z", "2026-03-06T19:30:00.000Z"],
      ["2026-03-13T17:00:00.000Z", "2026-03-13T18:30:00.000Z"],
      // Floating 14:00 read in New York (EDT, UTC−4).
      ["2026-03-20T18:00:00.000Z", "2026-03-20T19:00:00.000Z"],
      // A zone only the feed defines (UTC+05:30).
      ["2026-03-23T04:30:00.000Z", "2026-03-23T05:30:00.000Z"]
    ])
  })

  it("reads all-day dates as whole local days of the staff member, even on the day clocks change", () => {
    const feed = [
      "BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//test//EN",
      "BEGIN:VEVENT", "UID:a", "DTSTART;VALUE=DATE:20260329", "DTEND;VALUE=DATE:20260331", "END:VEVENT",
      "BEGIN:VEVENT", "UID:b", "DTSTART;VALUE=DATE:20260415", "END:VEVENT",
      "END:VCALENDAR"
    ].join("\r\n")
    expect(ranges(feed, "Europe/Berlin")).toEqual([
      // 29 March starts at UTC+1 and 31 March at UTC+2: 47 hours.
      ["2026-03-28T23:00:00.000Z", "2026-03-30T22:00:00.000Z"],
      // No DTEND: one day.
      ["2026-04-14T22:00:00.000Z", "2026-04-15T22:00:00.000Z"]
    ])
  })

  it("clips to the window and stops an endless rule at its end", () => {
    const feed = [
      "BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//test//EN",
      "BEGIN:VEVENT", "UID:daily", "DTSTART:20200101T080000Z", "DTEND:20200101T090000Z", "RRULE:FREQ=DAILY", "END:VEVENT",
      "END:VCALENDAR"
    ].join("\r\n")
    const within = { start: Date.parse("2026-03-01T08:30:00Z"), end: Date.parse("2026-03-04T08:30:00Z") }
    expect(ranges(feed, "UTC", within)).toEqual([
      ["2026-03-01T08:30:00.000Z", "2026-03-01T09:00:00.000Z"],
      ["2026-03-02T08:00:00.000Z", "2026-03-02T09:00:00.000Z"],
      ["2026-03-03T08:00:00.000Z", "2026-03-03T09:00:00.000Z"],
      ["2026-03-04T08:00:00.000Z", "2026-03-04T08:30:00.000Z"]
    ])
  })

  it("caps the expansion of a rule that starts too long ago", () => {
    const feed = [
      "BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//test//EN",
      "BEGIN:VEVENT", "UID:old", "DTSTART:19000101T080000Z", "DTEND:19000101T090000Z", "RRULE:FREQ=DAILY", "END:VEVENT",
      "END:VCALENDAR"
    ].join("\r\n")
    // Over 46,000 days before the window: the cap stops the walk before it gets there.
    expect(MAX_ITERATIONS_PER_EVENT).toBeLessThan(46_000)
    expect(ranges(feed, "UTC")).toEqual([])
  })

  it("refuses text that is not iCalendar", () => {
    expect(() => parseBusy("<html>Sign in</html>", { zone: "UTC", window })).toThrow(FeedParseError)
    expect(() => parseBusy("<html>Sign in</html>", { zone: "UTC", window })).toThrow(/not iCalendar/)
  })
})
