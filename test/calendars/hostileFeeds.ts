/**
 * Hostile calendar feeds, generated rather than committed: the reproductions of an attack on
 * busy-time import. Each is small to describe and costly to read without the parse limits.
 */
const calendar = (lines: ReadonlyArray<string>) =>
  ["BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//hostile//EN", ...lines, "END:VCALENDAR", ""].join("\r\n")

/** `count` series repeating with `freq` from `start`, none with an end (200 MINUTELY ones are ~26 KB). */
export const endlessSeries = (count: number, freq: "MINUTELY" | "SECONDLY", start: string): string => {
  const lines: Array<string> = []
  for (let i = 0; i < count; i++) {
    lines.push("BEGIN:VEVENT", `UID:endless-${i}@hostile`, `DTSTART:${start}`, "DURATION:PT1M", `RRULE:FREQ=${freq}`, "END:VEVENT")
  }
  return calendar(lines)
}

/** 200 MINUTELY series without end, starting in the window (26 KB). */
export const minutely200 = () => endlessSeries(200, "MINUTELY", "20260301T000000Z")
/** 2,000 of them (300 KB). */
export const minutely2000 = () => endlessSeries(2000, "MINUTELY", "20260301T000000Z")
/** 200 SECONDLY series from 1900: every step lies before any window. */
export const secondlyFrom1900 = () => endlessSeries(200, "SECONDLY", "19000101T000000Z")

/** One content line of ~4 MB: a start time with a million parameters. */
export const millionParameters = () =>
  calendar(["BEGIN:VEVENT", "UID:params@hostile", `DTSTART${";X-P=1".repeat(1_000_000)}:20260302T090000Z`, "DURATION:PT1H", "END:VEVENT"])

/** A zone of its own name whose rule changes every second since 1900: ical.js expands it into memory. */
export const junkTimezone = () =>
  calendar([
    "BEGIN:VTIMEZONE",
    "TZID:Junk Standard Time",
    "BEGIN:STANDARD",
    "DTSTART:19000101T000000",
    "TZOFFSETFROM:+0100",
    "TZOFFSETTO:+0000",
    "RRULE:FREQ=SECONDLY",
    "END:STANDARD",
    "BEGIN:DAYLIGHT",
    "DTSTART:19000101T000000",
    "TZOFFSETFROM:+0000",
    "TZOFFSETTO:+0100",
    "RRULE:FREQ=SECONDLY",
    "END:DAYLIGHT",
    "END:VTIMEZONE",
    "BEGIN:VEVENT",
    "UID:junk-zone@hostile",
    "DTSTART;TZID=Junk Standard Time:20260302T090000",
    "DURATION:PT1H",
    "END:VEVENT"
  ])

/** One event, the whole of an ordinary small feed. */
export const oneEvent = (start = "20260302T090000Z") =>
  calendar(["BEGIN:VEVENT", "UID:one@example", `DTSTART:${start}`, "DURATION:PT1H", "SUMMARY:Review", "END:VEVENT"])
