/**
 * Instants: the arithmetic parser agrees with the engine's own ISO parser on every RFC 3339
 * form and refuses what is impossible. The reference below is the earlier implementation
 * (Date.parse plus a calendar round trip), which read years below 100 as 19xx and so refused
 * them; the comparison covers years 100-9999, and those below are checked on their own.
 */
import { describe, expect, it } from "@effect/vitest"
import fc from "fast-check"
import { formatInstant, parseInstant, toMillis } from "../../src/domain/common.js"

const reference = (text: string): number | undefined => {
  const m = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/i.exec(text)
  if (m === null) return undefined
  const [, y, mo, d, h, mi, s] = m
  const ms = Date.parse(text.toUpperCase())
  if (Number.isNaN(ms)) return undefined
  const probe = new Date(Date.UTC(Number(y), Number(mo) - 1, Number(d), Number(h), Number(mi), Number(s ?? 0)))
  if (
    probe.getUTCFullYear() !== Number(y) || probe.getUTCMonth() !== Number(mo) - 1 ||
    probe.getUTCDate() !== Number(d) || probe.getUTCHours() !== Number(h) || probe.getUTCMinutes() !== Number(mi)
  ) return undefined
  return ms
}

const pad = (n: number, width = 2) => String(n).padStart(width, "0")

/** RFC 3339-shaped strings, with every field ranging a little past its valid values. */
const instantText = fc.record({
  year: fc.integer({ min: 100, max: 9999 }),
  month: fc.integer({ min: 0, max: 13 }),
  day: fc.integer({ min: 0, max: 32 }),
  hour: fc.integer({ min: 0, max: 24 }),
  minute: fc.integer({ min: 0, max: 60 }),
  second: fc.option(fc.integer({ min: 0, max: 60 })),
  fraction: fc.option(fc.stringMatching(/^\d{1,9}$/)),
  t: fc.constantFrom("T", "t"),
  zone: fc.oneof(
    fc.constantFrom("Z", "z"),
    fc.record({ sign: fc.constantFrom("+", "-"), h: fc.integer({ min: 0, max: 25 }), m: fc.integer({ min: 0, max: 60 }) })
      .map(({ h, m, sign }) => `${sign}${pad(h)}:${pad(m)}`)
  )
}).map((f) =>
  `${pad(f.year, 4)}-${pad(f.month)}-${pad(f.day)}${f.t}${pad(f.hour)}:${pad(f.minute)}` +
  (f.second === null ? "" : `:${pad(f.second)}${f.fraction === null ? "" : `.${f.fraction}`}`) + f.zone
)

describe("instants", () => {
  it("the parser agrees with the engine's ISO parser on 20,000 generated instants", () => {
    fc.assert(fc.property(instantText, (text) => parseInstant(text) === reference(text)), { numRuns: 20_000 })
  })

  it("refuses what is not an instant, as the engine's parser does", () => {
    fc.assert(fc.property(fc.string({ maxLength: 40 }), (text) => parseInstant(text) === reference(text)))
    for (const text of ["2026-03-29", "2026-03-29T08:30Z ", "2026-03-29T08:30:00", "2026-3-29T08:30:00Z", ""]) {
      expect(parseInstant(text), text).toBeUndefined()
    }
  })

  it("knows leap years, month lengths and the end of the day", () => {
    expect(parseInstant("2024-02-29T12:00:00Z")).toBe(Date.UTC(2024, 1, 29, 12))
    expect(parseInstant("2000-02-29T00:00:00Z")).toBe(Date.UTC(2000, 1, 29))
    expect(parseInstant("2023-02-29T00:00:00Z")).toBeUndefined()
    expect(parseInstant("1900-02-29T00:00:00Z")).toBeUndefined()
    expect(parseInstant("2026-04-31T00:00:00Z")).toBeUndefined()
    expect(parseInstant("2026-03-29T24:00:00Z")).toBeUndefined()
    expect(parseInstant("2026-03-29T23:59:60Z")).toBeUndefined()
  })

  it("applies offsets and keeps milliseconds, truncating finer fractions", () => {
    expect(parseInstant("2026-03-29T10:30:00+02:00")).toBe(Date.UTC(2026, 2, 29, 8, 30))
    expect(parseInstant("2026-03-29T02:00:00-05:30")).toBe(Date.UTC(2026, 2, 29, 7, 30))
    expect(parseInstant("2026-03-29T08:30:00.1Z")).toBe(Date.UTC(2026, 2, 29, 8, 30, 0, 100))
    expect(parseInstant("2026-03-29T08:30:00.123987654Z")).toBe(Date.UTC(2026, 2, 29, 8, 30, 0, 123))
  })

  it("reads years below 100 as written, and round-trips through formatInstant", () => {
    expect(parseInstant("0050-06-01T00:00:00Z")).toBe(new Date("0050-06-01T00:00:00Z").getTime())
    fc.assert(
      fc.property(fc.integer({ min: -62_135_596_800_000, max: 253_402_300_799_000 }), (ms) => parseInstant(formatInstant(ms)) === ms)
    )
  })

  it("reads a stored instant as the engine's parser does, whatever its year or fraction", () => {
    fc.assert(
      fc.property(fc.integer({ min: -62_167_219_200_000, max: 253_402_300_799_999 }), (ms) => {
        const text = formatInstant(ms)
        return toMillis(text) === ms && toMillis(text) === Date.parse(text)
      }),
      { numRuns: 20_000 }
    )
    // Beyond year 9999 the text is the engine's own extended spelling.
    expect(toMillis(formatInstant(253_402_300_800_000))).toBe(253_402_300_800_000)
    expect(toMillis(formatInstant(-62_167_219_200_001))).toBe(-62_167_219_200_001)
  })
})
