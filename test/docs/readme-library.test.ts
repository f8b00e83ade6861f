/**
 * The README's ten-line library example, run as written (only its import points at this
 * checkout) in a separate process, now and with the clock set to a weekend night before a
 * DST change, so the front page's first code a reader copies stays true.
 */
import { execFile } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { promisify } from "node:util"
import { afterAll, describe, expect, it } from "vitest"
import { readmeBlock } from "./shell.js"

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..")
fs.mkdirSync(path.join(root, ".vitest-tmp"), { recursive: true })
const dir = fs.mkdtempSync(path.join(root, ".vitest-tmp", "readme-"))
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))
const fakeNow = path.join(root, "test/examples/fixtures/fake-now.ts")

const example = (): string => readmeBlock("library", "ts").replace(`from "slotwise"`, `from ${JSON.stringify(path.join(root, "index.ts"))}`)

describe("README library example", () => {
  it.each([
    ["now", undefined],
    ["a Saturday night before Berlin's clocks go forward", "2027-03-27T23:30:00Z"]
  ])("books the first free slot and says what it did (%s)", async (name, now) => {
    const file = path.join(dir, `${name.replace(/\W+/g, "-")}.ts`)
    fs.writeFileSync(file, example())
    const { stdout, stderr } = await promisify(execFile)(
      process.execPath,
      ["--import", "tsx", "--import", fakeNow, file],
      { timeout: 60_000, env: { ...process.env, ...(now !== undefined ? { SLOTWISE_FAKE_NOW: now } : {}) } }
    )
    expect(stderr).toBe("")
    expect(stdout).toMatch(/^\d+ free slots; booked bkg_\w{26} at \S+Z \(confirmed\)\n$/)
    expect(Number(/^(\d+)/.exec(stdout)![1])).toBeGreaterThan(50)
  })
})
