/** What a service asks of a slot, in the milliseconds the scheduling functions work in. */
import type { Service } from "../services/service.js"
import type { SlotPolicy } from "./types.js"

const MINUTE = 60_000
const DAY = 86_400_000

export const policyOf = (service: Service): SlotPolicy => ({
  service_id: service.id,
  duration: service.duration_minutes * MINUTE,
  buffer_before: service.buffer_before_minutes * MINUTE,
  buffer_after: service.buffer_after_minutes * MINUTE,
  interval: service.slot_interval_minutes * MINUTE,
  capacity: service.capacity,
  min_notice: service.min_notice_minutes * MINUTE,
  max_advance: service.max_advance_days * DAY
})
