/**
 * The calendar port: writes a feed the core has decided on as iCalendar (RFC 5545) text. The
 * adapter (adapters/ical) does the escaping, line folding and CRLF line ends.
 */
import { Context } from "effect"
import type { FeedCalendar } from "../calendarFeeds/calendarFeed.js"

export interface CalendarRendererService {
  readonly render: (calendar: FeedCalendar) => string
}

export class CalendarRenderer extends Context.Tag("slotwise/CalendarRenderer")<CalendarRenderer, CalendarRendererService>() {}
