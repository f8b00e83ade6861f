/**
 * The reads the direct lane serves (../directReads.ts): each the same core call as its
 * endpoint's handler in this folder, with the endpoint's success schema.
 */
import { Effect } from "effect"
import { Availability } from "../../../src/availability/Availability.js"
import { Bookings } from "../../../src/bookings/Bookings.js"
import { Clients } from "../../../src/clients/Clients.js"
import { AvailabilityRule } from "../../../src/availability/rule.js"
import { Booking } from "../../../src/bookings/booking.js"
import { Client } from "../../../src/clients/client.js"
import { Manage } from "../../../src/manage/Manage.js"
import { Services } from "../../../src/services/Services.js"
import { Staff } from "../../../src/staff/Staff.js"
import { SlotwiseApi } from "../api.js"
import { ShownService, ShownStaff } from "../contract/resources.js"
import { directRead, makeDirectReadLane } from "../directReads.js"

export const directReads = Effect.gen(function*() {
  const bookings = yield* Bookings
  const clients = yield* Clients
  const services = yield* Services
  const staff = yield* Staff
  const availability = yield* Availability
  const manage = yield* Manage
  return [
    // Only secret keys and OAuth tokens take the lane (bookings:read): the read carries the manage link.
    directRead("bookings", "get", Booking, (id) => Effect.flatMap(bookings.get(id), manage.withManageUrl)),
    directRead("clients", "get", Client, clients.get),
    // The lane serves secret keys only, so these encode the first member: the whole resource.
    directRead("services", "get", ShownService, services.get),
    directRead("staff", "get", ShownStaff, staff.get),
    directRead("availability", "get", AvailabilityRule, availability.get)
  ]
})

/** The lane over these reads, as the server and the mounted Node handler run it. */
export const directReadLane = Effect.flatMap(directReads, (reads) => makeDirectReadLane(SlotwiseApi, reads))
