/**
 * Availability rules: when a staff member can be booked (docs/api.md §3). `weekly` hours repeat
 * on weekdays in a zone; `date` rules replace the weekly hours of one local date; `blocked`
 * ranges are time off. Wall-clock rules carry their IANA zone, so they follow it across DST.
 */
import { Schema } from "effect"
import {
  Instant,
  LocalDate,
  LocalTime,
  Metadata,
  ObjectType,
  TimeZone,
  Timestamps,
  minutesOfDay,
  optionalFields,
  toMillis
} from "../domain/common.js"
import { Id } from "../domain/ids.js"

const Weekday = Schema.Int.pipe(
  Schema.between(1, 7, { message: () => "must be a weekday from 1 (Monday) to 7 (Sunday)" }),
  Schema.annotations({ description: "ISO weekday: 1 is Monday, 7 is Sunday" })
)
const Weekdays = Schema.Array(Weekday).pipe(
  Schema.minItems(1),
  Schema.filter((days) => new Set(days).size === days.length || "must not repeat a weekday"),
  Schema.annotations({
    description: "ISO weekdays the hours apply on, 1 (Monday) to 7 (Sunday), each once",
    jsonSchema: { uniqueItems: true }
  })
)
const staffId = Id("staff").annotations({ description: "the staff member the rule is for" })
const ruleZone = TimeZone.annotations({ description: "IANA zone of the wall-clock times; default: the staff member's" })
const startTime = LocalTime.annotations({ description: "local start of the hours, `HH:MM`" })
const validFrom = Schema.NullOr(LocalDate).annotations({ description: "first local date the hours apply; null = always" })
const validUntil = Schema.NullOr(LocalDate).annotations({ description: "last local date the hours apply; null = always" })
const endTime = LocalTime.annotations({ description: "local end of the hours, `HH:MM`, later than start_time (24:00 = midnight)" })

const WeeklyFields = {
  staff_id: staffId,
  type: Schema.Literal("weekly").annotations({ description: "working hours that repeat every week" }),
  time_zone: ruleZone,
  weekdays: Weekdays,
  start_time: startTime,
  end_time: endTime,
  valid_from: validFrom,
  valid_until: validUntil,
  metadata: Metadata
}
const DateFields = {
  staff_id: staffId,
  type: Schema.Literal("date").annotations({ description: "hours for one local date, replacing that day's weekly hours" }),
  time_zone: ruleZone,
  date: LocalDate.annotations({ description: "the local date, `YYYY-MM-DD`" }),
  start_time: startTime,
  end_time: endTime,
  metadata: Metadata
}
const BlockedFields = {
  staff_id: staffId,
  type: Schema.Literal("blocked").annotations({ description: "time off: nothing can be booked in it" }),
  time_zone: ruleZone,
  start: Instant.annotations({ description: "start of the time off" }),
  end: Instant.annotations({ description: "end of the time off, later than start" }),
  metadata: Metadata
}

interface WallClockWindow {
  readonly start_time: string
  readonly end_time: string
}
const endsAfterStart = <A extends WallClockWindow>(rule: A) =>
  minutesOfDay(rule.end_time) > minutesOfDay(rule.start_time) ||
  { path: ["end_time"], message: "must be later than start_time" }

const validPeriod = <A extends { readonly valid_from?: string | null | undefined; readonly valid_until?: string | null | undefined }>(
  rule: A
) =>
  rule.valid_from == null || rule.valid_until == null || rule.valid_from <= rule.valid_until ||
  { path: ["valid_until"], message: "must not be before valid_from" }

const blockedOrder = <A extends { readonly start: string; readonly end: string }>(rule: A) =>
  toMillis(rule.end) > toMillis(rule.start) || { path: ["end"], message: "must be later than start" }

const resource = { id: Id("availability"), object: ObjectType("availability") }

export const WeeklyRule = Schema.Struct({ ...resource, ...WeeklyFields, ...Timestamps }).pipe(
  Schema.filter(endsAfterStart),
  Schema.filter(validPeriod)
).annotations({ identifier: "WeeklyAvailability" })
export const DateRule = Schema.Struct({ ...resource, ...DateFields, ...Timestamps }).pipe(
  Schema.filter(endsAfterStart)
).annotations({ identifier: "DateAvailability" })
export const BlockedRule = Schema.Struct({ ...resource, ...BlockedFields, ...Timestamps }).pipe(
  Schema.filter(blockedOrder)
).annotations({ identifier: "BlockedAvailability" })

export const AvailabilityRule = Schema.Union(WeeklyRule, DateRule, BlockedRule).annotations({
  identifier: "Availability"
})
export type WeeklyRule = typeof WeeklyRule.Type
export type DateRule = typeof DateRule.Type
export type BlockedRule = typeof BlockedRule.Type
export type AvailabilityRule = typeof AvailabilityRule.Type

/** Create input: the rule's fields; `time_zone` defaults to the staff member's. */
const createOf = <F extends Schema.Struct.Fields & { time_zone: typeof TimeZone; metadata: typeof Metadata }>(fields: F) => {
  const { time_zone, metadata, ...required } = fields
  return { ...required, ...optionalFields({ time_zone, metadata }) }
}
const { valid_from, valid_until, ...weeklyRequired } = createOf(WeeklyFields)

export const AvailabilityCreate = Schema.Union(
  Schema.Struct({ ...weeklyRequired, ...optionalFields({ valid_from, valid_until }) })
    .pipe(Schema.filter(endsAfterStart), Schema.filter(validPeriod))
    .annotations({ identifier: "WeeklyAvailabilityCreate" }),
  Schema.Struct(createOf(DateFields)).pipe(Schema.filter(endsAfterStart))
    .annotations({ identifier: "DateAvailabilityCreate" }),
  Schema.Struct(createOf(BlockedFields)).pipe(Schema.filter(blockedOrder))
    .annotations({ identifier: "BlockedAvailabilityCreate" })
).annotations({ identifier: "AvailabilityCreate" })
export type AvailabilityCreate = typeof AvailabilityCreate.Type

/**
 * Update input: any field of any rule type; the merged rule is validated again as a whole,
 * so a field that does not belong to the rule's type is refused there.
 */
export const AvailabilityUpdate = Schema.Struct(optionalFields({
  time_zone: TimeZone,
  weekdays: Weekdays,
  start_time: LocalTime,
  end_time: LocalTime,
  valid_from: validFrom,
  valid_until: validUntil,
  date: LocalDate,
  start: Instant,
  end: Instant,
  metadata: Metadata
})).annotations({ identifier: "AvailabilityUpdate" })
export type AvailabilityUpdate = typeof AvailabilityUpdate.Type
