/** The bookings feature: the `Bookings` use case, a booking's schemas, statuses and transitions. */
export { BookingListParams, Bookings } from "./Bookings.js"
export * from "./booking.js"
