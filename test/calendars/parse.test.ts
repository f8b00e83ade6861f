/**
 * The feed parser on hand-written feeds in the shapes Google, Outlook and Apple publish:
 * exact busy ranges, recurrence with exceptions and overrides, zones (IANA, Windows names,
 * a feed's own VTIMEZONE), floating times and all-day dates, across DST changes. Only the
 * properties busy time needs reach ical.js, and a series with a single rule is walked with
 * the rule's own iterator: both must give exactly what reading everything would.
 */
import ICAL from "ical.js"
import { readFileSync } from "node:fs"
import { describe, expect, it } from "vitest"
import { FeedParseError, MAX_STEPS_PER_SERIES, neededLines, parseBusy } from "../../adapters/calendars/parse.js"

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
      "BEGIN:VCALENDAR",
      "VERSION:2.0",
      "PRODID:-//test//EN",
      "BEGIN:VEVENT",
      "UID:a",
      "DTSTART;VALUE=DATE:20260329",
      "DTEND;VALUE=DATE:20260331",
      "END:VEVENT",
      "BEGIN:VEVENT",
      "UID:b",
      "DTSTART;VALUE=DATE:20260415",
      "END:VEVENT",
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
      "BEGIN:VCALENDAR",
      "VERSION:2.0",
      "PRODID:-//test//EN",
      "BEGIN:VEVENT",
      "UID:daily",
      "DTSTART:20200101T080000Z",
      "DTEND:20200101T090000Z",
      "RRULE:FREQ=DAILY",
      "END:VEVENT",
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
      "BEGIN:VCALENDAR",
      "VERSION:2.0",
      "PRODID:-//test//EN",
      "BEGIN:VEVENT",
      "UID:old",
      "DTSTART:19000101T080000Z",
      "DTEND:19000101T090000Z",
      "RRULE:FREQ=DAILY",
      "END:VEVENT",
      "END:VCALENDAR"
    ].join("\r\n")
    // Over 46,000 days before the window: the cap stops the walk before it gets there.
    expect(MAX_STEPS_PER_SERIES).toBeLessThan(46_000)
    expect(ranges(feed, "UTC")).toEqual([])
  })

  it("walks a series of one rule to exactly the occurrences ical.js's event expansion gives", () => {
    const rules = [
      ["weekly-off-rule", "20260303T090000Z", "FREQ=WEEKLY;BYDAY=MO,WE,FR;COUNT=10"],
      ["month-end", "20260131T120000Z", "FREQ=MONTHLY;BYMONTHDAY=31;COUNT=6"],
      ["every-third-day", "20260102T070000Z", "FREQ=DAILY;INTERVAL=3;UNTIL=20260401T070000Z"],
      ["leap-day", "20280229T100000Z", "FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=29;COUNT=2"],
      ["last-friday", "20260130T150000Z", "FREQ=MONTHLY;BYDAY=-1FR;UNTIL=20261231T235959Z"],
      ["every-five-hours", "20260310T000000Z", "FREQ=HOURLY;INTERVAL=5;COUNT=30"],
      ["second-tuesday-biweekly", "20260113T080000Z", "FREQ=WEEKLY;INTERVAL=2;BYDAY=TU;WKST=SU;COUNT=12"]
    ] as const
    const within = { start: Date.parse("2026-01-01T00:00:00Z"), end: Date.parse("2036-01-01T00:00:00Z") }
    for (const [uid, start, rule] of rules) {
      const feed = [
        "BEGIN:VCALENDAR",
        "VERSION:2.0",
        "PRODID:-//test//EN",
        "BEGIN:VEVENT",
        `UID:${uid}`,
        `DTSTART:${start}`,
        "DURATION:PT45M",
        `RRULE:${rule}`,
        "END:VEVENT",
        "END:VCALENDAR"
      ].join("\r\n")
      const event = new ICAL.Event(ICAL.Component.fromString(feed).getFirstSubcomponent("vevent")!)
      const expected: Array<Array<string>> = []
      const expansion = event.iterator()
      for (let next = expansion.next(); next; next = expansion.next()) {
        const ms = next.toUnixTime() * 1000
        expected.push([new Date(ms).toISOString(), new Date(ms + 45 * 60_000).toISOString()])
      }
      expect(expected.length, uid).toBeGreaterThan(1)
      expect(ranges(feed, "UTC", within), uid).toEqual(expected)
    }
  })

  it("leaves out transparent and cancelled series, but not an opaque override of one", () => {
    const feed = [
      "BEGIN:VCALENDAR",
      "VERSION:2.0",
      "PRODID:-//test//EN",
      "BEGIN:VEVENT",
      "UID:free",
      "DTSTART:20260302T090000Z",
      "DTEND:20260302T100000Z",
      "RRULE:FREQ=DAILY;COUNT=3",
      "TRANSP:TRANSPARENT",
      "END:VEVENT",
      "BEGIN:VEVENT",
      "UID:off",
      "DTSTART:20260302T110000Z",
      "DTEND:20260302T120000Z",
      "RRULE:FREQ=DAILY;COUNT=3",
      "STATUS:CANCELLED",
      "END:VEVENT",
      "BEGIN:VEVENT",
      "UID:free",
      "RECURRENCE-ID:20260303T090000Z",
      "DTSTART:20260303T140000Z",
      "DTEND:20260303T150000Z",
      "TRANSP:OPAQUE",
      "END:VEVENT",
      "END:VCALENDAR"
    ].join("\r\n")
    expect(ranges(feed, "UTC")).toEqual([["2026-03-03T14:00:00.000Z", "2026-03-03T15:00:00.000Z"]])
  })

  it("reads only the properties busy time needs, folded lines and lower-case names included", () => {
    const feed = [
      "BEGIN:VCALENDAR",
      "VERSION:2.0",
      "PRODID:-//test//EN",
      "BEGIN:VEVENT",
      "UID:folded",
      // A description folded over lines that look like properties: none of it is read.
      "DESCRIPTION:Agenda",
      " DTSTART:20260305T000000Z",
      "\tRRULE:FREQ=DAILY",
      "ATTENDEE;CN=\"Ana; Bob\":mailto:ana@example.com",
      "X-ALT-DESC;FMTTYPE=text/html:<p>DTEND:20260306T000000Z</p>",
      // A needed property folded mid-parameter.
      "DTSTART;TZID=Europe/Be",
      " rlin:20260302T090000",
      "dtend;tzid=Europe/Berlin:20260302T100000",
      "END:VEVENT",
      "END:VCALENDAR"
    ].join("\r\n")
    expect(ranges(feed, "UTC")).toEqual([["2026-03-02T08:00:00.000Z", "2026-03-02T09:00:00.000Z"]])
    expect(ranges(feed.replaceAll("\r\n", "\n"), "UTC")).toEqual([["2026-03-02T08:00:00.000Z", "2026-03-02T09:00:00.000Z"]])
    const kept = neededLines(feed)
    expect(kept).not.toMatch(/DESCRIPTION|ATTENDEE|X-ALT-DESC|PRODID|RRULE/)
    expect(kept).toContain("DTSTART;TZID=Europe/Be\r\n rlin:20260302T090000\r\n")
    // A line without a name is kept, so a malformed feed is still refused.
    expect(() => parseBusy(feed.replace("UID:folded", "UID:folded\r\nnot a content line"), { zone: "UTC", window }))
      .toThrow(FeedParseError)
  })

  it("refuses text that is not iCalendar", () => {
    expect(() => parseBusy("<html>Sign in</html>", { zone: "UTC", window })).toThrow(FeedParseError)
    expect(() => parseBusy("<html>Sign in</html>", { zone: "UTC", window })).toThrow(/not iCalendar/)
  })
})
