/**
 * The calendar port on ical-generator: one VCALENDAR with a VEVENT per feed event, times in
 * UTC, text escaped and lines folded at 75 octets by the library, every line ended by CRLF.
 */
import ical, { ICalEventStatus } from "ical-generator"
import { Layer } from "effect"
import type { FeedCalendar } from "../../src/calendarFeeds/calendarFeed.js"
import { CalendarRenderer } from "../../src/ports/calendar.js"

const PRODUCT = { company: "Slotwise", product: "Slotwise", language: "EN" }

export const renderCalendar = (calendar: FeedCalendar): string => {
  const feed = ical({ name: calendar.name, prodId: PRODUCT, ttl: calendar.refreshMinutes * 60 })
  for (const event of calendar.events) {
    feed.createEvent({
      id: event.uid,
      sequence: event.sequence,
      stamp: new Date(event.modified),
      lastModified: new Date(event.modified),
      start: new Date(event.start),
      end: new Date(event.end),
      status: ICalEventStatus[event.status],
      summary: event.summary,
      description: event.description
    })
  }
  // RFC 5545 ends every content line, the last one too, with CRLF.
  const text = feed.toString()
  return text.endsWith("\r\n") ? text : `${text}\r\n`
}

export const CalendarRendererLive = Layer.succeed(CalendarRenderer, { render: renderCalendar })
