/**
 * `createScheduling`'s options as a JavaScript caller passes them (no types to catch a slip):
 * a wrong option rejects with a `ValidationError` that names the field and says what is
 * accepted, never a silent in-memory instance or a `TypeError`; a database that cannot be
 * opened rejects with a `SlotwiseError` saying why, never a `FiberFailure` dump.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { createScheduling, SlotwiseError, ValidationError } from "../../index.js"
import { TEST_POSTGRES_URL } from "../postgres/database.js"

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "slotwise-options-"))
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))

const STORAGE_FORMS = `"memory", { sqlite: "<file>" } or { postgres: "postgres://…" }`

/** What `createScheduling(options)` rejects with (the test fails if it resolves). */
const refusal = async (options: unknown): Promise<SlotwiseError> => {
  const outcome = await createScheduling(options as never).then(
    async (s) => {
      await s.close()
      return new Error(`createScheduling(${JSON.stringify(options)}) resolved`)
    },
    (error: unknown) => error
  )
  expect(outcome).toBeInstanceOf(SlotwiseError)
  const error = outcome as SlotwiseError
  expect(String(error)).not.toContain("FiberFailure")
  return error
}

describe("createScheduling's options, checked when it is called", () => {
  it("{ sqlite: file } beside storage is refused, pointing at storage: { sqlite: file }", async () => {
    const error = await refusal({ sqlite: path.join(dir, "top-level.db") })
    expect(error).toBeInstanceOf(ValidationError)
    expect(error.code).toBe("validation_failed")
    expect(error.errors).toEqual([{ path: "sqlite", message: "is not a known field" }])
    expect(error.message).toContain(`the storage option takes ${STORAGE_FORMS}`)
    expect(fs.existsSync(path.join(dir, "top-level.db"))).toBe(false)
  })

  it.each([
    ["a storage name without its file", { storage: "sqlite" }],
    ["an object of neither kind", { storage: { file: "app.db" } }],
    ["an empty file name", { storage: { sqlite: "" } }],
    ["a PostgreSQL URL of another scheme", { storage: { postgres: "mysql://db/app" } }]
  ])("storage as %s is refused with the forms it takes", async (_, options) => {
    const error = await refusal(options)
    expect(error).toBeInstanceOf(ValidationError)
    expect(error.errors?.map((e) => e.path)).toEqual(["storage"])
    expect(error.message).toContain(STORAGE_FORMS)
  })

  it("every wrong option is named at once", async () => {
    const error = await refusal({ storage: "disk", webhooks: "yes", calendarSyncMinutes: -1, reminders: [{ offset_minutes: 1 }] })
    expect(error.errors?.map((e) => e.path).sort()).toEqual(["calendarSyncMinutes", "reminders.0.offset_minutes", "storage", "webhooks"])
  })

  it("a SQLite file in a missing directory: a SlotwiseError naming the file and the reason", async () => {
    const file = path.join(dir, "missing", "app.db")
    const error = await refusal({ storage: { sqlite: file } })
    expect(error.message).toContain(file)
    expect(error.message).toContain("directory does not exist")
  })

  it("a PostgreSQL database that does not exist: a SlotwiseError saying so", async () => {
    const url = new URL(TEST_POSTGRES_URL)
    url.pathname = "/slotwise_test_no_such_database"
    const error = await refusal({ storage: { postgres: url.toString() } })
    expect(error.message).toContain(`database "slotwise_test_no_such_database" does not exist`)
  }, 30_000)

  it("storage: { sqlite: file } opens that file", async () => {
    const file = path.join(dir, "app.db")
    const s = await createScheduling({ storage: { sqlite: file } })
    try {
      await s.staff.create({ name: "Ana", time_zone: "Europe/Berlin" })
    } finally {
      await s.close()
    }
    expect(fs.statSync(file).size).toBeGreaterThan(0)
  })
})
