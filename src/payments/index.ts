/** The payments feature: the `Payments` use case and a payment's schemas. */
export * from "./payment.js"
export { Payments } from "./Payments.js"
