/**
 * Cursor pagination (API.md §1): keyset cursors, opaque to clients, bound to the filters
 * they were issued for. A cursor carries the last row's sort key, so inserts and deletes
 * around it never shift a page.
 */
import { Effect, Schema } from "effect"
import { BadRequest } from "../domain/errors.js"
import type { IndexValue } from "../ports/storage.js"

export const DEFAULT_LIMIT = 20
export const MAX_LIMIT = 100

export const Limit = Schema.Int.pipe(
  Schema.between(1, MAX_LIMIT, { message: () => `must be a whole number from 1 to ${MAX_LIMIT}` }),
  Schema.annotations({ description: `items per page, 1 to ${MAX_LIMIT} (default ${DEFAULT_LIMIT})` })
)

export interface Page<A> {
  readonly object: "list"
  readonly data: ReadonlyArray<A>
  readonly has_more: boolean
  readonly next_cursor: string | null
}

export const PageSchema = <S extends Schema.Schema.Any>(item: S) =>
  Schema.Struct({
    object: Schema.Literal("list").annotations({ description: "the type of this object: always `list`" }),
    data: Schema.Array(item).annotations({ description: "this page's items" }),
    has_more: Schema.Boolean.annotations({ description: "whether more items follow this page" }),
    next_cursor: Schema.NullOr(Schema.String).annotations({ description: "pass as `cursor` for the next page; null on the last" })
  })

const toBase64Url = (text: string): string =>
  btoa(String.fromCharCode(...new TextEncoder().encode(text))).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "")

const fromBase64Url = (text: string): string => {
  const binary = atob(text.replace(/-/g, "+").replace(/_/g, "/"))
  return new TextDecoder().decode(Uint8Array.from(binary, (c) => c.charCodeAt(0)))
}

/** A short fingerprint of the filters, so a cursor cannot be replayed against other ones. */
const fingerprint = (filters: unknown): string => {
  const text = JSON.stringify(filters)
  let hash = 2166136261
  for (let i = 0; i < text.length; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 16777619) >>> 0
  return hash.toString(36)
}

export const encodeCursor = (key: ReadonlyArray<IndexValue>, filters: unknown): string =>
  toBase64Url(JSON.stringify({ k: key, f: fingerprint(filters) }))

const invalidCursor = (message: string) =>
  new BadRequest({ detail: `cursor ${message}`, errors: [{ path: "cursor", message }] })

export const decodeCursor = (
  cursor: string | undefined,
  filters: unknown
): Effect.Effect<ReadonlyArray<IndexValue> | undefined, BadRequest> =>
  Effect.suspend(() => {
    if (cursor === undefined) return Effect.succeed(undefined)
    let parsed: unknown
    try {
      parsed = JSON.parse(fromBase64Url(cursor))
    } catch {
      return Effect.fail(invalidCursor("is not a cursor this API issued"))
    }
    if (
      typeof parsed !== "object" || parsed === null || !Array.isArray((parsed as any).k) ||
      !(parsed as any).k.every((v: unknown) => v === null || typeof v === "string" || typeof v === "number")
    ) return Effect.fail(invalidCursor("is not a cursor this API issued"))
    if ((parsed as any).f !== fingerprint(filters)) {
      return Effect.fail(invalidCursor("was issued for other filters; start again without a cursor"))
    }
    return Effect.succeed((parsed as any).k as ReadonlyArray<IndexValue>)
  })

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
