/** The payments' collection: what it is indexed by, for filters and order. */
import type { Payment } from "./payment.js"
import type { CollectionSpec } from "../ports/storage.js"

export const PaymentsCollection: CollectionSpec<Payment> = {
  name: "payments",
  indexes: { booking_id: { type: "text", get: (p) => p.booking_id } },
  order: []
}
