/**
 * The reads the direct lane serves (../directReads.ts): each the same core call as its
 * endpoint's handler in this folder, with the endpoint's success schema.
 */
import { Effect } from "effect"
import { Availability } from "../../../src/Availability.js"
import { Bookings } from "../../../src/Bookings.js"
import { Clients } from "../../../src/Clients.js"
import { AvailabilityRule } from "../../../src/domain/availability.js"
import { Booking } from "../../../src/domain/booking.js"
import { Client } from "../../../src/domain/client.js"
import { Manage } from "../../../src/Manage.js"
import { Services } from "../../../src/Services.js"
import { Staff } from "../../../src/Staff.js"
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
