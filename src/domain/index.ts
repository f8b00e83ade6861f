/** The shared domain: instants, ids, money, slots, assignment, pages and input decoding (the typed errors are `Errors`). */
export * from "./assignment.js"
export * from "./common.js"
export * from "./ids.js"
export * from "./slot.js"
export { decodeInput, fieldErrorsOf } from "./validation.js"
export { type Page, PageSchema } from "./page.js"
