import { defineConfig } from "vitest/config"

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // Two cores, three forks: many files mostly wait (on child processes, on a real clock's
    // minute for reminders), so a third fork overlaps that waiting. In-process tests finish
    // well within these bounds on a busy machine; the files that start child processes set
    // longer ones on their own describe/it blocks (bounds only: every test waits on
    // conditions, not time).
    pool: "forks",
    poolOptions: { forks: { maxForks: 3, minForks: 1 } },
    testTimeout: 30_000,
    hookTimeout: 30_000
  }
})
