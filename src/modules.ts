/**
 * `slotwise/modules`: kept as an alias of `slotwise/core`, the same namespaces (src/index.ts),
 * for code that imported the by-module surface.
 */
export * from "./index.js"
