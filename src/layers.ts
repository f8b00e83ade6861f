/** The core's services composed into one layer; add a storage layer to run it. */
import { Layer } from "effect"
import { Availability } from "./Availability.js"
import { Bookings } from "./Bookings.js"
import { Clients } from "./Clients.js"
import { Events } from "./Events.js"
import { Services } from "./Services.js"
import { Staff } from "./Staff.js"

export type CoreServices = Services | Staff | Clients | Availability | Bookings | Events

/** Every core use case over one shared event log; needs `Storage`. */
export const CoreLive = Layer.mergeAll(
  Services.Default,
  Staff.Default,
  Availability.Default,
  Bookings.Default.pipe(Layer.provideMerge(Clients.Default))
).pipe(Layer.provideMerge(Events.Default))
