/**
 * The embedded example runs end to end as a separate process on a real SQLite file, with
 * the same story whatever the day and hour: now, and with its clock set to a moment that
 * once broke it (a Monday evening: six days of slots) and one that could (the weekend night
 * before a DST change).
 */
import { execFile } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { promisify } from "node:util"
import { afterAll, describe, expect, it } from "vitest"

const dir = mkdtempSync(join(tmpdir(), "slotwise-example-"))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const example = new URL("../../examples/embedded.ts", import.meta.url).pathname
const fakeNow = new URL("./fixtures/fake-now.ts", import.meta.url).pathname

const run = async (name: string, now?: string) => {
  const { stdout } = await promisify(execFile)(
    process.execPath,
    ["--import", "tsx", "--import", fakeNow, example, join(dir, `${name}.db`)],
    { timeout: 60_000, env: { ...process.env, ...(now !== undefined ? { SLOTWISE_FAKE_NOW: now } : {}) } }
  )
  return stdout
}

describe("examples/embedded.ts", () => {
  it.each([
    ["now", undefined],
    ["a Monday after 18:00 UTC", "2026-11-23T18:30:00Z"],
    ["a Saturday night before Lisbon's clocks go forward", "2027-03-27T23:59:59Z"]
  ])("books, is refused with alternatives, pays and reschedules (%s)", async (name, now) => {
    const stdout = await run(name.replace(/\W+/g, "-"), now)
    expect(stdout).toMatch(/^\d+ free slots over 7 days/m)
    expect(stdout).toMatch(/^booked bkg_\w{26} .* \(confirmed\)$/m)
    expect(stdout).toMatch(/^slot_unavailable: try \S+Z, \S+Z, \S+Z$/m)
    expect(stdout).toMatch(/^paid 1000 of 3500 → partially_paid$/m)
    expect(stdout).toMatch(/^rescheduled from \S+Z to \S+Z$/m)
    expect(stdout).toContain("booking.rescheduled bkg_")
    // It says where the data went and which account it belongs to, and how to list accounts.
    expect(stdout).toMatch(/^on SQLite \S+\.db, for account acc_0{26} \(sandbox\)$/m)
    expect(stdout).toMatch(/^the data stays in \S+\.db, under account acc_0{26}/m)
    expect(stdout).toContain("slotwise accounts list --database ")
  }, 60_000)
})
