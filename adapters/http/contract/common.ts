/** Pieces every group shares: path ids, strict bodies, list pages. */
import { Schema } from "effect"
import { PageSchema } from "../../../src/internal/pagination.js"

/** `{id}` in a path: any text; an id that names nothing (or another tenant's) is a 404. */
export const IdPath = Schema.Struct({ id: Schema.String })

/** A request body decoded with the core's rules: unknown fields refused, every error reported. */
export const body = <S extends Schema.Schema.AnyNoContext>(schema: S): S =>
  schema.annotations({ parseOptions: { onExcessProperty: "error", errors: "all" } }) as S

/**
 * A body with no fields (actions): `{}` or nothing; any field is unknown. (An empty
 * `Schema.Struct` accepts any non-null value, so a filter reports the unknown fields and non-objects.)
 */
export const NoFields = body(
  Schema.Struct({}).pipe(
    Schema.filter((value) =>
      // An empty Struct also accepts arrays and other non-null values: only an object is a body.
      typeof value !== "object" || Array.isArray(value)
        ? "must be a JSON object ({} or no body)"
        : Object.keys(value).map((key) => ({ path: [key], message: "is not a known field" }))
    )
  ).annotations({ identifier: "NoFields" })
)

export const pageOf = <S extends Schema.Schema.AnyNoContext>(item: S, identifier: string) =>
  PageSchema(item).annotations({ identifier })
