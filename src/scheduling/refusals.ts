/**
 * The API's refusals of a start (docs/api.md §3): `invalid_reference` when the staff member
 * or service cannot be booked at all, else `slot_unavailable` when every reason is a
 * conflict, else `outside_availability`; the two last offer alternatives.
 */
import { InvalidReference, OutsideAvailability, SlotUnavailable } from "../domain/errors.js"
import type { Service } from "../services/service.js"
import type { Reason, Slot } from "../domain/slot.js"
import type { Staff } from "../staff/member.js"

const SLOT_CONFLICTS: ReadonlySet<Reason["code"]> = new Set(["booking_overlap", "buffer_overlap", "capacity_full", "held"])
/** The reasons no other start would help with: the staff member or service itself. */
export const FIXED_REASONS: ReadonlySet<Reason["code"]> = new Set(["service_inactive", "staff_inactive", "staff_not_assigned"])

/** Why `staff` cannot be booked for `service` at all, whatever the time. */
export const staffReasons = (service: Service, staff: Staff): Array<Reason> => {
  const reasons: Array<Reason> = []
  if (!service.active) reasons.push({ code: "service_inactive", detail: `service ${service.id} is inactive` })
  if (!staff.active) reasons.push({ code: "staff_inactive", detail: `staff member ${staff.id} is inactive` })
  if (!service.staff_ids.includes(staff.id)) {
    reasons.push({ code: "staff_not_assigned", detail: `staff member ${staff.id} does not deliver service ${service.id}` })
  }
  return reasons
}

/** The refusal for `fixed` reasons, each on the field of what it is about. */
export const fixedRefusal = (fixed: ReadonlyArray<Reason>) =>
  new InvalidReference({
    detail: fixed.map((r) => r.detail).join("; "),
    errors: fixed.map((r) => ({ path: r.code === "service_inactive" ? "service_id" : "staff_id", message: r.detail }))
  })

/** The refusal for a start with `reasons` (none fixed), offering `alternatives`. */
export const startRefusal = (reasons: Array<Reason>, alternatives: Array<Slot>) => {
  const detail = reasons.map((r) => r.detail).join("; ")
  return reasons.every((r) => SLOT_CONFLICTS.has(r.code))
    ? new SlotUnavailable({ detail, reasons, alternatives })
    : new OutsideAvailability({ detail, reasons, alternatives })
}

/** No staff member of the tenant has the `staff_id` asked for. */
export const noStaffMember = (id: string) =>
  new InvalidReference({
    detail: `no staff member with id ${id}`,
    errors: [{ path: "staff_id", message: "does not name an existing staff member" }]
  })

export const noStaff = (service: Service) =>
  new InvalidReference({
    detail: `service ${service.id} has no staff`,
    errors: [{ path: "staff_id", message: "is required: the service has no staff to choose from" }]
  })
