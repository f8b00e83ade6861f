/**
 * A handler's answer as its response, encoded with the one member of the endpoint's success
 * schema that applies. Given a value, the platform encodes it with the union of every member
 * (each a transformation into a response), trying members in turn and running each candidate
 * as an effect; a handler that knows which member it answers with returns the response itself,
 * and the platform passes a response through as it is. Same status, content type and body.
 */
import { HttpApiError, HttpApiSchema, HttpServerResponse } from "@effect/platform"
import { Effect, Either, Schema } from "effect"

/** Answers with `member` (a member of the endpoint's success schema, with its status), built once per endpoint. */
export const encodedAs = <A, I>(member: Schema.Schema<A, I>) => {
  const encode = Schema.encodeEither(member)
  const status = HttpApiSchema.getStatusSuccess(member)
  const { contentType, kind } = HttpApiSchema.getEncoding(member.ast)
  if (kind !== "Json") throw new Error(`encodedAs answers JSON only, not ${kind}`)
  return (value: A): Effect.Effect<HttpServerResponse.HttpServerResponse, HttpApiError.HttpApiDecodeError> => {
    const encoded = encode(value)
    // A value the schema refuses fails as the platform's own encoding does.
    return Either.isRight(encoded)
      ? Effect.succeed(HttpServerResponse.unsafeJson(encoded.right, { status, contentType }))
      : HttpApiError.HttpApiDecodeError.refailParseError(encoded.left)
  }
}
