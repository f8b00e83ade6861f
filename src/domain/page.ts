/**
 * A page of a list (docs/api.md §1 Pagination): its shape and the `limit` every list takes.
 * The cursor inside `next_cursor` is opaque; how it is made is internal (internal/pagination.ts).
 */
import { Schema } from "effect"

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
