/**
 * Request bodies decoded once. The request pipeline decodes a write's body with its
 * endpoint's decoder (found here by the payload schema) before the router runs, refusing a
 * bad one with the core's `validation_failed` at once; the payload schema then finds the
 * decoded value here instead of decoding the same body a second time. The platform's own
 * refusal of a payload (a parse error turned into its decode error, each built and checked
 * by Schema) costs more than the rest of the request.
 */
import type { Either, SchemaAST as AST } from "effect"
import type { FieldIssue } from "../../../src/domain/validation.js"

/** A body's decoder: the decoded value, or each invalid field with the core's message. */
export type BodyDecoder = (input: unknown) => Either.Either<unknown, ReadonlyArray<FieldIssue>>

const decoders = new WeakMap<AST.AST, BodyDecoder>()
/** By the parsed body (a fresh object per request): the decoder that took it and its value. */
const decodedValues = new WeakMap<object, { readonly decoder: BodyDecoder; readonly value: unknown }>()

export const registerBodyDecoder = (ast: AST.AST, decoder: BodyDecoder): void => {
  decoders.set(ast, decoder)
}

/** The decoder of a payload schema made by `decodedAs`, if it is one. */
export const bodyDecoderOf = (ast: AST.AST): BodyDecoder | undefined => decoders.get(ast)

export const rememberDecoded = (parsed: object, decoder: BodyDecoder, value: unknown): void => {
  decodedValues.set(parsed, { decoder, value })
}

/** The value `decoder` made of this parsed body earlier in the request; only the same decoder's. */
export const decodedBefore = (parsed: unknown, decoder: BodyDecoder): { readonly value: unknown } | undefined => {
  if (typeof parsed !== "object" || parsed === null) return undefined
  const remembered = decodedValues.get(parsed)
  return remembered?.decoder === decoder ? remembered : undefined
}
