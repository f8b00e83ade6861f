/** Pure scheduling: zones, availability windows, slots, booking checks and explain. */
export * from "./types.js"
export * from "./zones.js"
export { availableWindows } from "./windows.js"
export { checkStart, nearestSlots } from "./checks.js"
export { computeSlots, type SlotMaker } from "./slots.js"
