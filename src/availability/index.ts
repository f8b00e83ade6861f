/** The availability feature: the `Availability` use case (slots, explanations), availability rules and holds. */
export { Availability, ExplainQuery, Explanation, SlotList, SlotQuery } from "./Availability.js"
export * from "./rule.js"
export * from "./hold.js"
