/**
 * Request bodies decoded once. The request pipeline decodes a write's body with its
 * endpoint's decoder (found here by the payload schema) before the router runs, refusing a
 * bad one with the core's `validation_failed` at once; the payload schema then finds the
 * decoded value here instead of decoding the same body a second time. The platform's own
 * refusal of a payload (a parse error turned into its decode error, each built and checked
 * by Schema) costs more than the rest of the request.
 */
import type { Either, SchemaAST as AST } from "effect"
import type { FieldIssue } from "../../../src/internal/validation.js"

/** A body's decoder: the decoded value, or each invalid field with the core's message. */
export type BodyDecoder = (input: unknown) => Either.Either<unknown, ReadonlyArray<FieldIssue>>

const decoders = new WeakMap<AST.AST, BodyDecoder>()
/** By the parsed body (a fresh object per request): its decoded value, until the request ends. */
const decodedValues = new WeakMap<object, unknown>()

export const registerBodyDecoder = (ast: AST.AST, decoder: BodyDecoder): void => {
  decoders.set(ast, decoder)
}

/** The decoder of a payload schema made by `decodedAs`, if it is one. */
export const bodyDecoderOf = (ast: AST.AST): BodyDecoder | undefined => decoders.get(ast)

export const rememberDecoded = (parsed: object, value: unknown): void => {
  decodedValues.set(parsed, value)
}

/** The decoded value of a parsed body decoded earlier in this request. */
export const decodedBefore = (parsed: unknown): { readonly value: unknown } | undefined =>
  typeof parsed === "object" && parsed !== null && decodedValues.has(parsed) ? { value: decodedValues.get(parsed) } : undefined
