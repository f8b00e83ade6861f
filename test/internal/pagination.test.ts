/** Keyset cursors (docs/api.md §1): opaque, round-tripping the sort key, bound to their filters. */
import { Effect, Either } from "effect"
import { describe, expect, it } from "vitest"
import { decodeCursor, encodeCursor, pageOf } from "../../src/internal/pagination.js"

const decode = (cursor: string | undefined, filters: unknown) => Effect.runSync(Effect.either(decodeCursor(cursor, filters)))
const base64url = (text: string) => Buffer.from(text, "utf8").toString("base64url")
const filters = { status: ["confirmed"], staff_id: "stf_01HZX5J3K4M5N6P7Q8R9S0T1V2" }

/** The fingerprint a cursor for `f` carries, read from one the module issued. */
const fingerprintOf = (f: unknown): string => JSON.parse(Buffer.from(encodeCursor([], f), "base64url").toString("utf8")).f

describe("cursors", () => {
  it("round-trip every kind of sort key, including non-ASCII text and null", () => {
    for (const key of [["2027-03-29T07:00:00Z", "bkg_1"], [1, 2.5, -3], [null, "ä€😀", 0], []]) {
      const cursor = encodeCursor(key, filters)
      expect(cursor).toMatch(/^[A-Za-z0-9_-]+$/) // safe in a query string as is
      expect(decode(cursor, filters)).toEqual(Either.right(key))
    }
  })

  it("no cursor means the first page", () => {
    expect(decode(undefined, filters)).toEqual(Either.right(undefined))
  })

  it("keep the format already issued: base64url JSON of the key and a filter fingerprint", () => {
    const cursor = encodeCursor(["2027-03-29T07:00:00Z", "bkg_1"], {})
    const payload = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"))
    expect(payload).toEqual({ k: ["2027-03-29T07:00:00Z", "bkg_1"], f: expect.any(String) })
    expect(decode(base64url(JSON.stringify(payload)), {})).toEqual(Either.right(payload.k))
  })

  it("refuse a cursor bound to other filters, naming the cursor", () => {
    const cursor = encodeCursor([1, "bkg_1"], { status: ["confirmed"] })
    for (const other of [{ status: ["cancelled"] }, {}, { status: ["confirmed"], staff_id: "stf_1" }]) {
      const result = decode(cursor, other)
      expect(Either.isLeft(result) && result.left).toMatchObject({
        _tag: "BadRequest",
        detail: "cursor was issued for other filters; start again without a cursor",
        errors: [{ path: "cursor", message: "was issued for other filters; start again without a cursor" }]
      })
    }
  })

  it("refuse anything this API did not issue as bad_request on cursor, never a defect", () => {
    const good = encodeCursor([1, "bkg_1"], filters)
    const tampered = [
      "",
      "not a cursor!",
      good.slice(0, -3),
      good.slice(0, 5) + (good[5] === "A" ? "B" : "A") + good.slice(6),
      base64url("not json"),
      base64url("null"),
      base64url("[]"),
      base64url(JSON.stringify({ k: "1", f: "x" })),
      base64url(JSON.stringify({ k: [{}], f: "x" })),
      base64url(JSON.stringify({ k: [true], f: "x" })),
      base64url(JSON.stringify({ k: [1] })),
      base64url(JSON.stringify({ f: "x" }))
    ]
    for (const cursor of tampered) {
      const result = decode(cursor, filters)
      expect(Either.isLeft(result), cursor).toBe(true)
      expect(Either.isLeft(result) && result.left).toMatchObject({ _tag: "BadRequest", errors: [{ path: "cursor" }] })
    }
  })
  it("with the sort key's shape, refuse a key of other types or length, and keep one that fits (nulls too)", () => {
    const shape = ["integer", "text"] as const
    const shaped = (key: ReadonlyArray<string | number | null>) =>
      Effect.runSync(Effect.either(decodeCursor(base64url(JSON.stringify({ k: key, f: fingerprintOf(filters) })), filters, shape)))
    for (const key of [["1806310800000", "bkg_1"], [1.5, "bkg_1"], [1e300, "bkg_1"], [1, 2], [1], [1, "bkg_1", "x"], [], [1, "a\u0000b"]]) {
      expect(shaped(key), JSON.stringify(key)).toMatchObject(
        Either.left({ _tag: "BadRequest", errors: [{ path: "cursor", message: "is not a cursor this API issued" }] })
      )
    }
    expect(shaped([1806310800000, "bkg_1"])).toEqual(Either.right([1806310800000, "bkg_1"]))
    expect(shaped([null, "bkg_1"])).toEqual(Either.right([null, "bkg_1"]))
  })
})

describe("pages", () => {
  const rows = [{ id: "a", n: 1 }, { id: "b", n: 2 }, { id: "c", n: 3 }]
  const keyOf = (row: { id: string; n: number }) => [row.n, row.id]

  it("with one row more than the limit: has_more and a cursor after the last row shown", () => {
    const page = pageOf(rows, 2, keyOf, filters)
    expect(page).toMatchObject({ object: "list", data: rows.slice(0, 2), has_more: true })
    expect(decode(page.next_cursor!, filters)).toEqual(Either.right([2, "b"]))
  })

  it("the last page has no cursor", () => {
    expect(pageOf(rows, 3, keyOf, filters)).toEqual({ object: "list", data: rows, has_more: false, next_cursor: null })
    expect(pageOf([], 3, keyOf, filters)).toEqual({ object: "list", data: [], has_more: false, next_cursor: null })
  })
})
