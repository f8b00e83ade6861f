/**
 * Stored documents as read-only values. A storage that hands the same value to every reader
 * (the memory storage, and SQLite's parsed documents) freezes it first, so a use case or an
 * embedding app that changed one in place fails at once (a `TypeError`) instead of changing
 * what the next reader gets, or what a rolled-back change left behind.
 */

/** `value` and everything in it made read-only; returns `value`. */
export const deepFreeze = <A>(value: A): A => {
  if (typeof value === "object" && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value)
    for (const key of Object.keys(value)) deepFreeze((value as Record<string, unknown>)[key])
  }
  return value
}
