/** The widget's "add to calendar" file: RFC 5545 text escaping and line folding. */
import ICAL from "ical.js"
import { describe, expect, it } from "vitest"
import { fold, ics, icsText } from "../../widget/time.js"

const event = (summary: string, description = "Booking bkg_01") =>
  ics({
    uid: "bkg_01@slotwise",
    start: "2027-03-29T14:00:00Z",
    end: "2027-03-29T15:00:00Z",
    stamp: "2027-03-26T08:00:00.123Z",
    summary,
    description
  })

const octets = (line: string) => new TextEncoder().encode(line).length

describe(".ics text", () => {
  it("escapes backslash, semicolon and comma", () => {
    expect(icsText("a\\b;c,d")).toBe("a\\\\b\\;c\\,d")
  })

  it("writes CRLF, a lone CR and a lone LF each as one \\n", () => {
    expect(icsText("one\r\ntwo\rthree\nfour")).toBe("one\\ntwo\\nthree\\nfour")
  })

  it("drops control characters TEXT cannot hold and keeps tabs", () => {
    expect(icsText("a\u0000b\u0007c\u001bd\u007fe\tf")).toBe("abcde\tf")
  })

  it("a name full of line breaks cannot add a property to the event", () => {
    const file = event("Cut\r\nATTENDEE:mailto:evil@example.com\rX-INJECTED:1")
    const lines = file.split("\r\n")
    expect(lines.some((l) => l.startsWith("ATTENDEE") || l.startsWith("X-INJECTED"))).toBe(false)
    expect(file.replace(/\r\n/g, "")).not.toMatch(/[\r\n]/)
    const vevent = new ICAL.Component(ICAL.parse(file)).getFirstSubcomponent("vevent")!
    expect(vevent.getFirstPropertyValue("summary")).toBe("Cut\nATTENDEE:mailto:evil@example.com\nX-INJECTED:1")
    expect(vevent.getAllProperties("attendee")).toHaveLength(0)
  })
})

describe(".ics folding", () => {
  it("keeps a line of 75 octets whole and folds the 76th onto a continuation", () => {
    expect(fold("x".repeat(75))).toBe("x".repeat(75))
    expect(fold("x".repeat(76))).toBe(`${"x".repeat(75)}\r\n x`)
  })

  it("counts octets, not characters, and never splits a character", () => {
    const folded = fold(`SUMMARY:${"ü".repeat(60)}${"😀".repeat(20)}`)
    const lines = folded.split("\r\n")
    expect(lines.length).toBeGreaterThan(2)
    for (const line of lines) expect(octets(line)).toBeLessThanOrEqual(75)
    for (const line of lines.slice(1)) expect(line.startsWith(" ")).toBe(true)
    expect(folded).not.toContain("\uFFFD")
    expect(lines.map((l, i) => (i === 0 ? l : l.slice(1))).join("")).toBe(`SUMMARY:${"ü".repeat(60)}${"😀".repeat(20)}`)
  })

  it("a long, multi-byte, escaped summary parses back to the text it was made from", () => {
    const summary = `Haarschnitt; Färben, Föhnen \\ Styling\r\n${"Überlänge ".repeat(20)}🙂`
    const file = event(summary, "Booking bkg_01, with notes; and more")
    for (const line of file.split("\r\n")) expect(octets(line)).toBeLessThanOrEqual(75)
    const vevent = new ICAL.Component(ICAL.parse(file)).getFirstSubcomponent("vevent")!
    expect(vevent.getFirstPropertyValue("summary")).toBe(summary.replace("\r\n", "\n"))
    expect(vevent.getFirstPropertyValue("description")).toBe("Booking bkg_01, with notes; and more")
    expect(vevent.getFirstPropertyValue("dtstart")?.toString()).toBe("2027-03-29T14:00:00Z")
  })
})

describe(".ics of a series", () => {
  it("holds one event per occurrence, each with its own UID and times, in one calendar", () => {
    const occurrences = ["2027-03-29T07:30:00Z", "2027-04-05T07:30:00Z", "2027-04-19T07:30:00Z"].map((start, i) => ({
      uid: `bkg_0${i}@slotwise`,
      start,
      end: start.replace("07:30", "08:00"),
      stamp: "2027-03-26T08:00:00Z",
      summary: "Physio (Salon Ana)",
      description: `Booking bkg_0${i}`
    }))
    const calendar = new ICAL.Component(ICAL.parse(ics(occurrences)))
    const events = calendar.getAllSubcomponents("vevent")
    expect(events.map((e) => e.getFirstPropertyValue("uid"))).toEqual(["bkg_00@slotwise", "bkg_01@slotwise", "bkg_02@slotwise"])
    expect(events.map((e) => e.getFirstPropertyValue("dtstart")?.toString())).toEqual([
      "2027-03-29T07:30:00Z",
      "2027-04-05T07:30:00Z",
      "2027-04-19T07:30:00Z"
    ])
    expect(events.map((e) => e.getFirstPropertyValue("dtend")?.toString())).toEqual([
      "2027-03-29T08:00:00Z",
      "2027-04-05T08:00:00Z",
      "2027-04-19T08:00:00Z"
    ])
    expect(calendar.getAllSubcomponents("vcalendar")).toHaveLength(0)
  })
})
