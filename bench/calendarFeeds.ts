/** iCalendar feeds the calendar benchmarks serve. */
import { DAY, iso, MONDAY } from "./fixtures.js"

const HOUR = 3_600_000
export const stamp = (ms: number) => iso(ms).replace(/[-:]/g, "")
const local = (ms: number) => stamp(ms).replace(/Z$/, "")

export const calendar = (events: ReadonlyArray<string>, zones = "") =>
  ["BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//Slotwise bench//EN", zones, ...events, "END:VCALENDAR"].filter(Boolean).join("\r\n")

export const vevent = (uid: string, lines: ReadonlyArray<string>) =>
  ["BEGIN:VEVENT", `UID:${uid}`, "DTSTAMP:20260101T000000Z", ...lines, "SUMMARY:Busy", "TRANSP:OPAQUE", "END:VEVENT"].join("\r\n")

const BERLIN = [
  "BEGIN:VTIMEZONE",
  "TZID:Europe/Berlin",
  "BEGIN:DAYLIGHT",
  "TZOFFSETFROM:+0100",
  "TZOFFSETTO:+0200",
  "TZNAME:CEST",
  "DTSTART:19700329T020000",
  "RRULE:FREQ=YEARLY;BYMONTH=3;BYDAY=-1SU",
  "END:DAYLIGHT",
  "BEGIN:STANDARD",
  "TZOFFSETFROM:+0200",
  "TZOFFSETTO:+0100",
  "TZNAME:CET",
  "DTSTART:19701025T030000",
  "RRULE:FREQ=YEARLY;BYMONTH=10;BYDAY=-1SU",
  "END:STANDARD",
  "END:VTIMEZONE"
].join("\r\n")

/** About 2 MB (~7,500 events in Europe/Berlin with its VTIMEZONE): events through the coming year, every tenth a weekly series. */
export const bigFeed = () => {
  const events: Array<string> = []
  let size = 0
  for (let i = 0; size < 2 * 1024 * 1024; i++) {
    const start = MONDAY + (i % 365) * DAY + (7 + (i % 11)) * HOUR
    const lines = [
      `DTSTART;TZID=Europe/Berlin:${local(start)}`,
      `DTEND;TZID=Europe/Berlin:${local(start + HOUR)}`,
      ...(i % 10 === 0 ? ["RRULE:FREQ=WEEKLY;COUNT=20"] : []),
      `DESCRIPTION:Meeting ${i} about the quarterly plan\\, with notes that make the event as long as real ones are`,
      "LOCATION:Room 4.12"
    ]
    const text = vevent(`big-${i}@example.com`, lines)
    size += text.length + 2
    events.push(text)
  }
  return { text: calendar(events, BERLIN), events: events.length }
}
