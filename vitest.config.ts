import { relative } from "node:path"
import { defineConfig } from "vitest/config"
import { BaseSequencer, type TestSpecification } from "vitest/node"

/**
 * The longest files, longest first. The two forks take files from one queue, so these start
 * at once and the many short files fill the other fork beside them; started last, one of them
 * would run alone at the end. Vitest orders by the durations it recorded in an earlier run,
 * but a fresh install (CI) has none and starts the largest files first, and these are small.
 */
const LONGEST_FIRST = [
  "test/multi/startup.test.ts",
  "test/http/processes.test.ts",
  "test/multi/reminders.test.ts",
  "test/widget/widget.test.ts",
  "test/multi/instances.test.ts",
  "test/package/package.test.ts",
  "test/oauth/pages.browser.test.ts",
  "test/multi/calendars.test.ts",
  "test/storage/postgres.test.ts",
  "test/multi/outages.test.ts",
  "test/postgres/storage.test.ts"
]

class LongestFirst extends BaseSequencer {
  override async sort(files: Array<TestSpecification>): Promise<Array<TestSpecification>> {
    const rank = (file: TestSpecification) => {
      const at = LONGEST_FIRST.indexOf(relative(this.ctx.config.root, file.moduleId).split("\\").join("/"))
      return at === -1 ? LONGEST_FIRST.length : at
    }
    // A stable sort: the other files keep vitest's order.
    return (await super.sort(files)).sort((a, b) => rank(a) - rank(b))
  }
}

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // Two cores: run files in parallel forks. In-process tests finish well within these
    // bounds on a busy machine; the files that start child processes set longer ones on
    // their own describe/it blocks (bounds only: every test waits on conditions, not time).
    pool: "forks",
    // A fork runs its files one after another in one process, so the modules most files share
    // (the core, the HTTP layer, effect) load once per fork rather than once per file, which
    // was most of a short file's time. Files leave nothing for the next: each stops what it
    // starts in afterAll, none mocks a module or sets process.env, fake timers end afterEach.
    poolOptions: { forks: { maxForks: 2, minForks: 1, isolate: false } },
    sequence: { sequencer: LongestFirst },
    testTimeout: 30_000,
    hookTimeout: 30_000
  }
})
