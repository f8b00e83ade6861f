import { Schema, Struct } from "effect"
import { Email, Metadata, Name, ObjectType, TimeZone, Timestamps, optionalFields } from "../domain/common.js"
import { Id } from "../domain/ids.js"

export const StaffFields = {
  name: Name,
  email: Schema.NullOr(Email).annotations({ description: "email address; null when none" }),
  time_zone: TimeZone.annotations({ description: "IANA time zone of the staff member's working hours, such as `Europe/Berlin`" }),
  active: Schema.Boolean.annotations({ description: "inactive staff cannot be booked" }),
  metadata: Metadata
}

export const Staff = Schema.Struct({
  id: Id("staff"),
  object: ObjectType("staff"),
  ...StaffFields,
  ...Timestamps
}).annotations({ identifier: "Staff" })
export type Staff = typeof Staff.Type

/** What visitors (publishable keys) are not shown of a staff member: the schema and the view both leave these out. */
const STAFF_PRIVATE_FIELDS = ["email", "metadata"] as const
/** A staff member as visitors (publishable keys) see them: no `email`, no `metadata`. */
export const PublicStaff = Staff.omit(...STAFF_PRIVATE_FIELDS).annotations({
  identifier: "PublicStaff",
  description: "A staff member as a publishable key sees them: active ones only, without `email` and `metadata`."
})
export type PublicStaff = typeof PublicStaff.Type
export const publicStaff = (staff: Staff): PublicStaff => Struct.omit(staff, ...STAFF_PRIVATE_FIELDS)

// A time zone is required: working hours read in a zone the caller never chose (UTC) would
// put every slot hours off, silently.
const { name, time_zone, ...optionalOnCreate } = StaffFields
export const StaffCreate = Schema.Struct({
  name,
  time_zone,
  ...optionalFields(optionalOnCreate)
}).annotations({ identifier: "StaffCreate" })
export type StaffCreate = typeof StaffCreate.Type

export const StaffUpdate = Schema.Struct(optionalFields(StaffFields)).annotations({ identifier: "StaffUpdate" })
export type StaffUpdate = typeof StaffUpdate.Type

export const staffDefaults = { email: null, active: true, metadata: {} }
