/** The embedded example runs end to end as a separate process on a real SQLite file. */
import { execFile } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { promisify } from "node:util"
import { afterAll, expect, it } from "vitest"

const dir = mkdtempSync(join(tmpdir(), "slotwise-example-"))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

it("examples/embedded.ts books, is refused with alternatives, pays and reschedules", async () => {
  const example = new URL("../../examples/embedded.ts", import.meta.url).pathname
  const { stdout } = await promisify(execFile)(process.execPath, ["--import", "tsx", example, join(dir, "salon.db")], {
    timeout: 60_000
  })
  expect(stdout).toMatch(/^\d+ free slots over 7 days/m)
  expect(stdout).toMatch(/^booked bkg_\w{26} .* \(confirmed\)$/m)
  expect(stdout).toMatch(/^slot_unavailable: try \S+Z, \S+Z, \S+Z$/m)
  expect(stdout).toMatch(/^paid 1000 of 3500 → partially_paid$/m)
  expect(stdout).toMatch(/^rescheduled from \S+Z to \S+Z$/m)
  expect(stdout).toContain("booking.rescheduled bkg_")
}, 60_000)
