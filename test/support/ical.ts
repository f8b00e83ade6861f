/** Reads calendar feeds back with ical.js (a strict RFC 5545 parser) and checks their line format. */
import ICAL from "ical.js"
import { expect } from "vitest"

export interface ParsedEvent {
  readonly uid: string
  readonly sequence: number
  readonly status: string
  readonly start: string
  readonly end: string
  readonly stamp: string
  readonly lastModified: string
  readonly summary: string
  readonly description: string | null
}

export interface ParsedFeed {
  readonly name: string
  readonly refresh: string
  readonly ttl: string
  readonly events: ReadonlyArray<ParsedEvent>
}

const utc = (value: unknown): string => {
  const time = value as ICAL.Time
  expect(time.zone?.tzid).toBe("UTC")
  return time.toJSDate().toISOString().replace(".000Z", "Z")
}

/**
 * Checks the octets of a feed: every line ends with CRLF (no bare CR or LF anywhere), no line
 * is longer than 75 octets, and no folded line splits a UTF-8 character.
 */
export const expectWellFormed = (body: string) => {
  expect(body.endsWith("\r\n")).toBe(true)
  const lines = body.slice(0, -2).split("\r\n")
  for (const line of lines) {
    expect(line).not.toMatch(/[\r\n]/)
    expect(Buffer.byteLength(line, "utf8")).toBeLessThanOrEqual(75)
    // A split character would have been replaced when decoding.
    expect(line).not.toContain("\uFFFD")
  }
  return lines
}

/** Parses the feed; every VEVENT must have UID, DTSTAMP and DTSTART, all times in UTC. */
export const parseFeed = (body: string): ParsedFeed => {
  const calendar = new ICAL.Component(ICAL.parse(body))
  expect(calendar.name).toBe("vcalendar")
  expect(calendar.getFirstPropertyValue("version")).toBe("2.0")
  const events = calendar.getAllSubcomponents("vevent").map((event): ParsedEvent => {
    for (const required of ["uid", "dtstamp", "dtstart", "dtend"]) expect(event.hasProperty(required), required).toBe(true)
    return {
      uid: String(event.getFirstPropertyValue("uid")),
      sequence: Number(event.getFirstPropertyValue("sequence")),
      status: String(event.getFirstPropertyValue("status")),
      start: utc(event.getFirstPropertyValue("dtstart")),
      end: utc(event.getFirstPropertyValue("dtend")),
      stamp: utc(event.getFirstPropertyValue("dtstamp")),
      lastModified: utc(event.getFirstPropertyValue("last-modified")),
      summary: String(event.getFirstPropertyValue("summary")),
      description: event.hasProperty("description") ? String(event.getFirstPropertyValue("description")) : null
    }
  })
  return {
    name: String(calendar.getFirstPropertyValue("x-wr-calname")),
    refresh: String(calendar.getFirstPropertyValue("refresh-interval")),
    ttl: String(calendar.getFirstPropertyValue("x-published-ttl")),
    events
  }
}
