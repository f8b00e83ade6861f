/** External calendars: the `Calendars` use case, a calendar's schemas, its sync settings and what it keeps in storage. */
export { CalendarListParams, Calendars, CalendarSyncSettings, type CalendarSyncSettingsService } from "./Calendars.js"
export { BusyRangesCollection, CalendarsCollection } from "./collections.js"
export * from "./calendar.js"
