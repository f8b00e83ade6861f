/**
 * Runs every benchmark, one after another (they would disturb each other's figures), and
 * prints their output. Run: `npm run bench`. Each benchmark is bounded and exits by itself.
 * bench/side-by-side.ts is not among them: it compares two checkouts, named when it is run.
 */
import { spawnSync } from "node:child_process"
import { fileURLToPath } from "node:url"

const benches = [
  "slots-pure.ts",
  "core.ts",
  "memory.ts",
  "stack-floor.ts",
  "startup.ts",
  "http.ts",
  "http-ceiling.ts",
  "create-statements.ts",
  "http-steps.ts",
  "webhooks.ts",
  "widget.ts",
  "oauth.ts",
  "assignment.ts",
  "series.ts",
  "calendars.ts",
  "calendar-stall.ts",
  "calendarFeeds.ts",
  "acrossTenantScans.ts",
  "postgres.ts",
  "dispatcherPerCommit.ts",
  "instances.ts"
]
let failed = 0
for (const bench of benches) {
  console.log(`\n=== bench/${bench} ===`)
  const result = spawnSync(process.execPath, ["--import", "tsx", fileURLToPath(new URL(bench, import.meta.url))], {
    stdio: "inherit",
    timeout: 10 * 60_000
  })
  if (result.status !== 0) {
    failed++
    console.log(`bench/${bench} exited with ${result.status ?? result.signal}`)
  }
}
process.exit(failed === 0 ? 0 : 1)
