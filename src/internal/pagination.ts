/**
 * Cursor pagination (docs/api.md §1): keyset cursors, opaque to clients, bound to the filters
 * they were issued for. A cursor carries the last row's sort key, so inserts and deletes
 * around it never shift a page.
 */
import { Effect, Schema } from "effect"
import { BadRequest } from "../domain/errors.js"
import type { IndexValue } from "../ports/storage.js"
import { containsNulOrLoneSurrogate } from "../domain/validation.js"

// The page's public shape lives with the domain; cursors stay internal.
import type { Page } from "../domain/page.js"

export { DEFAULT_LIMIT, Limit, type Page, PageSchema } from "../domain/page.js"

/** A short fingerprint of the filters, so a cursor cannot be replayed against other ones. */
const fingerprint = (filters: unknown): string => {
  const text = JSON.stringify(filters)
  let hash = 2166136261
  for (let i = 0; i < text.length; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 16777619) >>> 0
  return hash.toString(36)
}

/** What a cursor carries: the last row's sort key (`k`) and the filters' fingerprint (`f`). */
const Cursor = Schema.compose(
  Schema.StringFromBase64Url,
  Schema.parseJson(Schema.Struct({
    k: Schema.Array(Schema.Union(Schema.Null, Schema.String, Schema.Number)),
    f: Schema.String
  }))
)
const encodeCursorText = Schema.encodeSync(Cursor)
const decodeCursorText = Schema.decodeUnknown(Cursor)

export const encodeCursor = (key: ReadonlyArray<IndexValue>, filters: unknown): string =>
  encodeCursorText({ k: key, f: fingerprint(filters) })

const invalidCursor = (message: string) => new BadRequest({ detail: `cursor ${message}`, errors: [{ path: "cursor", message }] })
const notIssued = () => invalidCursor("is not a cursor this API issued")

/** The type of each value of a sort key, in order: what a cursor's key must match. */
export type KeyShape = ReadonlyArray<"text" | "integer">

const fitsShape = (key: ReadonlyArray<IndexValue>, shape: KeyShape | undefined): boolean =>
  shape === undefined ||
  key.length === shape.length &&
    key.every((value, i) => value === null || (shape[i] === "integer" ? Number.isSafeInteger(value) : typeof value === "string"))

/**
 * The sort key a cursor resumes after (none without a cursor), or `bad_request` on `cursor`.
 * With `shape`, a key that does not fit it (a forged cursor: text where a number sorts, a
 * value too many) is refused here rather than handed to storage.
 */
export const decodeCursor = (
  cursor: string | undefined,
  filters: unknown,
  shape?: KeyShape
): Effect.Effect<ReadonlyArray<IndexValue> | undefined, BadRequest> =>
  cursor === undefined ? Effect.succeed(undefined) : decodeCursorText(cursor).pipe(
    Effect.mapError(() => notIssued()),
    // No stored value holds a NUL; a forged cursor may.
    Effect.filterOrFail(
      (parsed) => fitsShape(parsed.k, shape) && !parsed.k.some((v) => typeof v === "string" && containsNulOrLoneSurrogate(v)),
      notIssued
    ),
    Effect.filterOrFail(
      (parsed) => parsed.f === fingerprint(filters),
      () => invalidCursor("was issued for other filters; start again without a cursor")
    ),
    Effect.map((parsed) => parsed.k)
  )

/** Builds a page from `limit + 1` rows fetched after the cursor. */
export const pageOf = <A>(
  rows: ReadonlyArray<A>,
  limit: number,
  keyOf: (row: A) => ReadonlyArray<IndexValue>,
  filters: unknown
): Page<A> => {
  const has_more = rows.length > limit
  const data = has_more ? rows.slice(0, limit) : rows
  const last = data[data.length - 1]
  return {
    object: "list",
    data,
    has_more,
    next_cursor: has_more && last !== undefined ? encodeCursor(keyOf(last), filters) : null
  }
}
