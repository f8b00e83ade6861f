/** Recurring bookings: the `RecurringBookings` use case, a series' schemas and the recurrence rules it accepts. */
export { BookingSeriesListParams, publicSeries, RecurringBookings } from "./RecurringBookings.js"
export * from "./recurrence.js"
export * from "./series.js"
