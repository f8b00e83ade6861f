import { defineConfig } from "vitest/config"

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // Two cores: run files in parallel forks. In-process tests finish well within these
    // bounds on a busy machine; the files that start child processes set longer ones on
    // their own describe/it blocks (bounds only: every test waits on conditions, not time).
    pool: "forks",
    poolOptions: { forks: { maxForks: 2, minForks: 1 } },
    testTimeout: 30_000,
    hookTimeout: 30_000
  }
})
