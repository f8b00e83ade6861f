/**
 * Decoding of every input with the resource's schema: unknown fields are refused and every
 * invalid field is reported at once, each with its path (`client.email`, `weekdays.2`).
 */
import { Effect, ParseResult, Schema } from "effect"
import { type FieldError, ValidationFailed } from "../domain/errors.js"

export const fieldErrorsOf = (error: ParseResult.ParseError): Array<FieldError> => {
  const seen = new Set<string>()
  const result: Array<FieldError> = []
  for (const issue of ParseResult.ArrayFormatter.formatErrorSync(error)) {
    const path = issue.path.map(String).join(".")
    const message = issue._tag === "Unexpected" ? "is not a known field" : issue.message
    const key = `${path}\u0000${message}`
    if (seen.has(key)) continue
    seen.add(key)
    result.push({ path, message })
  }
  // A union (`NullOr(Money)`) reports its branches: keep the deepest, most specific ones.
  return result.filter((e) => !result.some((other) => other.path.startsWith(e.path === "" ? "" : `${e.path}.`) && other !== e && other.path !== e.path))
}

export const validationFailed = (errors: ReadonlyArray<FieldError>): ValidationFailed =>
  new ValidationFailed({
    detail: errors.length === 1
      ? `${errors[0]!.path || "body"} ${errors[0]!.message}`
      : `${errors.length} fields are invalid: ${errors.map((e) => e.path || "body").join(", ")}`,
    errors
  })

const options = { errors: "all", onExcessProperty: "error" } as const

/** Decodes `input` with `schema`, or fails with `validation_failed` naming every bad field. */
export const decodeInput = <A, I>(schema: Schema.Schema<A, I, never>) => {
  const decode = Schema.decodeUnknown(schema, options)
  return (input: unknown): Effect.Effect<A, ValidationFailed> =>
    Effect.mapError(decode(input ?? {}), (error) => validationFailed(fieldErrorsOf(error)))
}
