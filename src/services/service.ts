import { Schema, Struct } from "effect"
import {
  Metadata,
  Minutes,
  Money,
  Name,
  ObjectType,
  optional,
  PositiveMinutes,
  Text,
  Timestamps,
  optionalFields
} from "../domain/common.js"
import { AssignmentFields, assignmentDefaults } from "../domain/assignment.js"
import { Id } from "../domain/ids.js"
import { Questions } from "./question.js"
import { Reminders } from "../reminders/reminder.js"

/** The longest a service (and so a booking) can last. */
export const MAX_DURATION_MINUTES = 1440
/** The longest buffer before or after a service. */
export const MAX_BUFFER_MINUTES = 1440
/**
 * The longest range a booking or hold can occupy (buffers snapshotted with it included):
 * an overlap query may look no further back than this from the range it checks.
 */
export const MAX_OCCUPIED_MINUTES = MAX_BUFFER_MINUTES + MAX_DURATION_MINUTES + MAX_BUFFER_MINUTES

/** The editable fields of a service, each with its one validation rule. */
export const ServiceFields = {
  name: Name,
  description: Schema.NullOr(Text(2000)).annotations({ description: "what the service is, up to 2000 characters" }),
  duration_minutes: PositiveMinutes(MAX_DURATION_MINUTES).annotations({ description: "how long an appointment lasts, 1 to 1440 minutes" }),
  buffer_before_minutes: Minutes(MAX_BUFFER_MINUTES).annotations({
    description: "time kept free before each appointment, 0 to 1440 minutes"
  }),
  buffer_after_minutes: Minutes(MAX_BUFFER_MINUTES).annotations({
    description: "time kept free after each appointment, 0 to 1440 minutes"
  }),
  slot_interval_minutes: PositiveMinutes(1440).annotations({ description: "minutes between offered starts; default: the duration" }),
  capacity: Schema.Int.pipe(Schema.between(1, 1000, { message: () => "must be a whole number from 1 to 1000" })).annotations({
    description: "clients one staff member can take at the same start (classes), 1 to 1000"
  }),
  min_notice_minutes: Minutes(525_600).annotations({ description: "how far ahead of a start it must be booked, in minutes" }),
  max_advance_days: Schema.Int.pipe(Schema.between(1, 1830, { message: () => "must be a whole number from 1 to 1830" })).annotations({
    description: "how many days ahead it can be booked, 1 to 1830"
  }),
  cancellation_notice_minutes: Minutes(525_600).annotations({
    description: "how long before a start a client may still cancel or move it through the manage link, in minutes (default 0)"
  }),
  requires_confirmation: Schema.Boolean.annotations({ description: "new bookings start `pending` until confirmed" }),
  price: Schema.NullOr(Money).annotations({ description: "what an appointment costs; null when free" }),
  staff_ids: Schema.Array(Id("staff")).pipe(Schema.maxItems(500)).annotations({
    description: "the staff members who provide it (up to 500)"
  }),
  active: Schema.Boolean.annotations({ description: "inactive services cannot be booked" }),
  questions: Questions,
  reminders: Schema.NullOr(Reminders).annotations({
    description: "this service's reminder offsets; null = the account's, [] = none"
  }),
  max_occurrences: Schema.Int.pipe(Schema.between(0, 52, { message: () => "must be a whole number from 0 to 52" })).annotations({
    description: "the most occurrences a recurring booking of it may have, 0 to 52 (default 0: repeats are not offered)"
  }),
  metadata: Metadata,
  ...AssignmentFields
}

export const Service = Schema.Struct({
  id: Id("service"),
  object: ObjectType("service"),
  ...ServiceFields,
  // Services stored before the fields existed lack them: read as 0.
  cancellation_notice_minutes: optional(ServiceFields.cancellation_notice_minutes),
  max_occurrences: optional(ServiceFields.max_occurrences),
  ...Timestamps
}).annotations({ identifier: "Service" })
export type Service = typeof Service.Type

/** What visitors (publishable keys) are not shown of a service: the schema and the view both leave these out. */
const SERVICE_PRIVATE_FIELDS = ["metadata"] as const
/** A service as visitors (publishable keys) see it: without the account's own `metadata`. */
export const PublicService = Service.omit(...SERVICE_PRIVATE_FIELDS).annotations({
  identifier: "PublicService",
  description: "A service as a publishable key sees it: active ones only, without `metadata`."
})
export type PublicService = typeof PublicService.Type
export const publicService = (service: Service): PublicService => Struct.omit(service, ...SERVICE_PRIVATE_FIELDS)

const { name, duration_minutes, ...optionalOnCreate } = ServiceFields

export const ServiceCreate = Schema.Struct({
  name,
  duration_minutes,
  ...optionalFields(optionalOnCreate)
}).annotations({ identifier: "ServiceCreate" })
export type ServiceCreate = typeof ServiceCreate.Type

export const ServiceUpdate = Schema.Struct(optionalFields(ServiceFields)).annotations({ identifier: "ServiceUpdate" })
export type ServiceUpdate = typeof ServiceUpdate.Type

export const serviceDefaults = (input: ServiceCreate) => ({
  description: null,
  buffer_before_minutes: 0,
  buffer_after_minutes: 0,
  slot_interval_minutes: input.duration_minutes,
  capacity: 1,
  min_notice_minutes: 0,
  cancellation_notice_minutes: 0,
  max_advance_days: 365,
  requires_confirmation: false,
  price: null,
  staff_ids: [],
  active: true,
  questions: [],
  reminders: null,
  max_occurrences: 0,
  metadata: {},
  ...assignmentDefaults
})
