/** Pieces every group shares: path ids, strict bodies and their messages, list pages. */
import { Either, ParseResult, Schema, SchemaAST as AST } from "effect"
import { PageSchema } from "../../../src/domain/page.js"
import { type FieldIssue, inputDecoder } from "../../../src/domain/validation.js"
import { decodedBefore, registerBodyDecoder } from "./decodedBodies.js"

/** `{id}` in a path: any text; an id that names nothing (or another tenant's) is a 404. */
export const IdPath = Schema.Struct({ id: Schema.String })

/**
 * `schema` as the HTTP layer decodes it: with the core's rules (unknown fields refused, every
 * error reported) and the core's field messages, each invalid field one issue carrying its
 * final message, so the platform's decode error lists exactly what the core would. The
 * OpenAPI document still shows `schema` itself (its surrogate). `prepare` adjusts the raw
 * input first (query strings).
 */
export const decodedAs = <A, I>(
  schema: Schema.Schema<A, I>,
  prepare: (input: unknown) => unknown = (input) => input,
  reword: (input: unknown, fields: ReadonlyArray<FieldIssue>) => ReadonlyArray<FieldIssue> = (_, fields) => fields
): Schema.Schema<A, I> => {
  const decode = inputDecoder(schema)
  const encode = ParseResult.encodeUnknownEither(schema)
  const check = (input: unknown): Either.Either<A, ReadonlyArray<FieldIssue>> =>
    Either.mapLeft(decode(prepare(input)), (issues) => reword(input, issues))
  const declared = Schema.declare([], {
    decode: () => (input, _, ast) => {
      const before = decodedBefore(input, check)
      return before !== undefined ? Either.right(before.value as A) : Either.mapLeft(check(input), (issues) => reported(ast, input, issues))
    },
    encode: () => (value) => encode(value)
  }, { [AST.SurrogateAnnotationId]: schema.ast })
  registerBodyDecoder(declared.ast, check)
  return declared
}

const reported = (ast: AST.AST, input: unknown, fields: ReadonlyArray<FieldIssue>): ParseResult.ParseIssue => {
  const issues = fields.map((field): ParseResult.ParseIssue => {
    const issue = new ParseResult.Type(ast, undefined, field.message)
    return field.path.length === 0 ? issue : new ParseResult.Pointer(field.path as [PropertyKey, ...Array<PropertyKey>], input, issue)
  })
  return issues.length === 1
    ? issues[0]!
    : new ParseResult.Composite(ast, input, issues as [ParseResult.ParseIssue, ...Array<ParseResult.ParseIssue>])
}

/** A request body decoded with the core's rules and messages. */
export const body = <S extends Schema.Schema.AnyNoContext>(schema: S): Schema.Schema<Schema.Schema.Type<S>, Schema.Schema.Encoded<S>> =>
  decodedAs(schema as Schema.Schema<Schema.Schema.Type<S>, Schema.Schema.Encoded<S>>)

const isPlainObject = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)

/**
 * The body of an action (confirm, complete, …): optional; when sent, a JSON object without
 * fields. Documented as such: an object that admits no properties.
 */
export const NoFields: Schema.Schema<{}> = Schema.declare([], {
  decode: () => (input, _, ast) => {
    if (input === undefined || input === null) return ParseResult.succeed({})
    if (!isPlainObject(input)) return ParseResult.fail(reported(ast, input, [{ path: [], message: "must be a JSON object" }]))
    const unknown = Object.keys(input)
    return unknown.length === 0
      ? ParseResult.succeed({})
      : ParseResult.fail(reported(ast, input, unknown.map((key) => ({ path: [key], message: "is not a known field" }))))
  },
  encode: () => () => ParseResult.succeed({})
}, {
  identifier: "NoFields",
  description: "No fields: send `{}` or no body at all.",
  jsonSchema: { type: "object", additionalProperties: false, properties: {} }
})

export const pageOf = <S extends Schema.Schema.AnyNoContext>(item: S, identifier: string) => PageSchema(item).annotations({ identifier })
