/**
 * Who attends a service's bookings (docs/api.md §11 "Assignment"): the schemas of a service's
 * assignment settings and of a booking's assignment. The rule that decides who is free and
 * whom to pick is src/scheduling/assignment.ts.
 */
import { Schema } from "effect"
import { Id } from "./ids.js"

export const Assignment = Schema.Literal("chosen", "round_robin", "collective").annotations({
  identifier: "Assignment",
  description: "`chosen` (default): the request names `staff_id`; `round_robin`: the server picks one free member " +
    "by `round_robin_policy`; `collective`: every staff member of the service attends"
})
export type Assignment = typeof Assignment.Type

export const RoundRobinPolicy = Schema.Literal("least_recently_booked", "fewest_upcoming", "weighted").annotations({
  identifier: "RoundRobinPolicy",
  description: "how a round-robin service picks among the free members: `least_recently_booked` (default: the one " +
    "whose last booking of this service was made longest ago), `fewest_upcoming` (fewest pending/confirmed bookings " +
    "of this service from now on) or `weighted` (assignments proportional to `staff_weights` over time)"
})
export type RoundRobinPolicy = typeof RoundRobinPolicy.Type

/** A member's weight when `staff_weights` does not name them. */
export const DEFAULT_STAFF_WEIGHT = 50

export const StaffWeight = Schema.Int.pipe(
  Schema.between(0, 100, { message: () => "must be a whole number from 0 to 100" })
)

export const StaffWeights = Schema.Record({ key: Id("staff"), value: StaffWeight }).annotations({
  identifier: "StaffWeights",
  description: `weights (0–100) of the service's staff for the \`weighted\` policy, by staff id; a member not named ` +
    `weighs ${DEFAULT_STAFF_WEIGHT}; weight 0 is picked only when no member with a positive weight is free`
})
export type StaffWeights = typeof StaffWeights.Type

/** The assignment settings of a service, spread into its fields. */
export const AssignmentFields = {
  assignment: Assignment,
  round_robin_policy: RoundRobinPolicy,
  staff_weights: StaffWeights
}

export const assignmentDefaults = {
  assignment: "chosen",
  round_robin_policy: "least_recently_booked",
  staff_weights: {}
} as const satisfies { readonly [K in keyof typeof AssignmentFields]: (typeof AssignmentFields)[K]["Type"] }

/**
 * How a booking's (or hold's) staff were decided: `chosen` (the request named the member),
 * `first_free` (a service without round robin, asked without `staff_id`: its first free
 * member in `staff_ids` order), `round_robin` (the server picked by the service's policy),
 * `collective` (every member of the service).
 */
export const AssignedBy = Schema.Literal("chosen", "first_free", "round_robin", "collective").annotations({
  identifier: "AssignedBy",
  description: "how the staff were decided: `chosen` (named by the request), `first_free` (asked without " +
    "`staff_id` on a `chosen` service: its first free member), `round_robin` (picked by the service's policy), " +
    "`collective` (every member of the service)"
})
export type AssignedBy = typeof AssignedBy.Type

/** The staff fields of a booking or a hold. */
export const StaffAssignmentFields = {
  staff_ids: Schema.Array(Id("staff")).annotations({
    description: "every staff member who attends: one, or all the service's members for a collective service"
  }),
  assigned_by: AssignedBy
}

/**
 * Why a service's assignment settings do not fit its staff, as `{path, message}` errors: a
 * weight for someone who does not deliver the service, or a collective/round-robin service
 * without staff is allowed (it just has no slots), so only weights are checked.
 */
export const assignmentErrors = (service: {
  readonly staff_ids: ReadonlyArray<string>
  readonly staff_weights: StaffWeights
}): Array<{ readonly path: string; readonly message: string }> => {
  const members = new Set(service.staff_ids)
  return Object.keys(service.staff_weights)
    .filter((id) => !members.has(id))
    .map((id) => ({ path: `staff_weights.${id}`, message: "names a staff member who is not in staff_ids" }))
}
