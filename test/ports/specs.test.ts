import { Either } from "effect"
import { describe, expect, it } from "vitest"
import { indexColumnsToAdd, indexValuesOf, specProblem, storageIndexGroups } from "../../src/ports/specs.js"
import type { CollectionSpec } from "../../src/ports/storage.js"

interface Doc {
  readonly id: string
  readonly kind: string
  readonly size: number
}

const spec = (over: Partial<CollectionSpec<Doc>> = {}): CollectionSpec<Doc> => ({
  name: "docs",
  indexes: { kind: { type: "text", get: (d) => d.kind }, size: { type: "integer", get: (d) => d.size } },
  order: [],
  ...over
})

describe("collection spec rules", () => {
  it("accepts a well-formed spec and names what is wrong with others", () => {
    expect(specProblem(spec())).toBeUndefined()
    expect(specProblem(spec({ name: "bad-name" }))).toMatch(/not an identifier$/)
    expect(specProblem(spec({ name: "x".repeat(41) }))).toBeUndefined()
    expect(specProblem(spec({ name: "x".repeat(41) }), { maxNameLength: 40 })).toMatch(/at most 40 characters/)
    expect(specProblem(spec({ indexes: { doc: { type: "text", get: () => null } } }))).toMatch(/reserved column/)
    expect(specProblem(spec({ order: ["colour"] }))).toMatch(/order column "colour"/)
    expect(specProblem(spec({ storageIndexes: [[]] }))).toMatch(/storage index/)
    expect(specProblem(spec({ storageIndexes: [["kind", "colour"]] }))).toMatch(/storage index/)
    expect(specProblem(spec({ sparseColumns: ["kind"] }))).toBeUndefined()
    expect(specProblem(spec({ sparseColumns: ["colour"] }))).toMatch(/sparse column "colour"/)
    expect(specProblem(spec({ acrossTenantIndexes: [["size"]] }))).toBeUndefined()
    expect(specProblem(spec({ acrossTenantIndexes: [["size", "colour"]] }))).toMatch(/index across tenants/)
  })

  it("indexes each column by default, and the order columns unless a group is exactly them", () => {
    expect(storageIndexGroups(spec())).toEqual([["kind"], ["size"]])
    expect(storageIndexGroups(spec({ order: ["size"] }))).toEqual([["kind"], ["size"]])
    expect(storageIndexGroups(spec({ order: ["size", "kind"] }))).toEqual([["kind"], ["size"], ["size", "kind"]])
    expect(storageIndexGroups(spec({ order: ["size"], storageIndexes: [["kind", "size"]] })))
      .toEqual([["kind", "size"], ["size"]])
    expect(storageIndexGroups(spec({ storageIndexes: [] }))).toEqual([])
  })

  it("lists the index columns a table lacks, and refuses a column of another type", () => {
    const columnType = (type: "text" | "integer") => (type === "integer" ? "INTEGER" : "TEXT")
    expect(indexColumnsToAdd(spec(), "c_docs", new Map([["kind", "TEXT"]]), columnType)).toEqual(Either.right(["size"]))
    expect(indexColumnsToAdd(spec(), "c_docs", new Map([["kind", "TEXT"], ["size", "INTEGER"]]), columnType))
      .toEqual(Either.right([]))
    expect(indexColumnsToAdd(spec(), "c_docs", new Map([["size", "TEXT"]]), columnType)).toEqual(
      Either.left("c_docs.size is TEXT but the spec declares integer; migrate it by hand")
    )
  })

  it("derives index values from a document, absent ones as null", () => {
    const withOptional = spec({ indexes: { ...spec().indexes, note: { type: "text", get: () => undefined as never } } })
    expect(indexValuesOf(withOptional, ["size", "note", "kind"], { id: "d1", kind: "a", size: 3 })).toEqual([3, null, "a"])
  })
})
