/**
 * Decoding of every input with the resource's schema: unknown fields are refused and every
 * invalid field is reported at once, each with its path (`client.email`, `weekdays.2`).
 */
import { type Effect, Either, ParseResult, Schema } from "effect"
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
  // A union (`NullOr(Money)`) reports each of its branches: keep the most specific complaint,
  // that is the deepest paths, and at one path not "Expected null" when the value was not null.
  return result.filter((e) =>
    !result.some((other) => other !== e && other.path !== e.path && other.path.startsWith(e.path === "" ? "" : `${e.path}.`)) &&
    !(e.message.startsWith("Expected null") && result.some((other) => other !== e && other.path === e.path))
  )
}

export const validationFailed = (errors: ReadonlyArray<FieldError>): ValidationFailed => {
  const fields = [...new Set(errors.map((e) => e.path || "body"))]
  return new ValidationFailed({
    detail: errors.length === 1
      ? `${fields[0]} ${errors[0]!.message}`
      : fields.length === 1
      ? `${fields[0]} is invalid: ${errors.map((e) => e.message).join("; ")}`
      : `${fields.length} fields are invalid: ${fields.join(", ")}`,
    errors
  })
}

const options = { errors: "all", onExcessProperty: "error" } as const

/**
 * Decodes `input` with `schema`, or fails with `validation_failed` naming every bad field.
 * The result is an `Either`, itself an Effect: decoding is synchronous, and running it as an
 * Effect program would cost more than the decoding.
 */
export const decodeInput = <A, I>(schema: Schema.Schema<A, I, never>) => {
  const decode = Schema.decodeUnknownEither(schema, options)
  return (input: unknown): Effect.Effect<A, ValidationFailed> =>
    Either.mapLeft(decode(input ?? {}), (error) => validationFailed(fieldErrorsOf(error)))
}
