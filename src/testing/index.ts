/** For tests: a `TestClock` that starts at a given instant. */
export { TestClockAt } from "./testClock.js"
