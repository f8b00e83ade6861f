/**
 * A handler's answer as its response, encoded with the one member of the endpoint's success
 * schema that applies. Given a value, the platform encodes it with the union of every member
 * (each a transformation into a response), trying members in turn and running each candidate
 * as an effect; a handler that knows which member it answers with returns the response itself,
 * and the platform passes a response through as it is. Same status, content type and body.
 */
import { HttpApiError, HttpApiSchema, HttpServerResponse } from "@effect/platform"
import { Effect, Either, Option, ParseResult, Schema, SchemaAST as AST } from "effect"

/** A value a compiled step refuses: the schema's own encoder then has the last word. */
const REFUSED: unique symbol = Symbol("refused")
type Step = (input: unknown) => unknown

/** The schema's own encoder for one node of it (the kinds `step` does not compile). */
const ownStep = (ast: AST.AST): Step => {
  const encode = ParseResult.encodeUnknownEither(Schema.make(ast))
  return (input) => {
    const result = encode(input)
    return Either.isRight(result) ? result.right : REFUSED
  }
}

/** A node whose encoded and decoded forms are the same value: no transformation anywhere in it. */
const isPlain = (ast: AST.AST): boolean => {
  switch (ast._tag) {
    case "StringKeyword":
    case "NumberKeyword":
    case "BooleanKeyword":
    case "Literal":
      return true
    case "Refinement":
      return isPlain(ast.from)
    case "Union":
      return ast.types.every(isPlain)
    case "TupleType":
      return ast.elements.every((e) => isPlain(e.type)) && ast.rest.every((r) => isPlain(r.type))
    case "TypeLiteral":
      return ast.propertySignatures.every((ps) => isPlain(ps.type)) &&
        ast.indexSignatures.every((is) => isPlain(is.parameter) && isPlain(is.type))
    default:
      return false
  }
}

const withoutRefinements = (ast: AST.AST): AST.AST => AST.isRefinement(ast) ? withoutRefinements(ast.from) : ast

/**
 * Whether Effect would try this union member ahead of its turn: members with a literal field
 * (a tag) are tried first when the value's field matches (conservatively: any kind it may look into).
 */
const isTagged = (ast: AST.AST): boolean => {
  switch (ast._tag) {
    case "Refinement":
      return isTagged(ast.from)
    case "Transformation":
      return isTagged(ast.to)
    case "TypeLiteral":
      return ast.propertySignatures.some((ps) => !ps.isOptional && AST.isLiteral(AST.typeAST(ps.type)))
    case "TupleType":
      return ast.elements.some((e) => !e.isOptional && AST.isLiteral(AST.typeAST(e.type)))
    case "Declaration":
    case "Suspend":
      return true
    default:
      return false
  }
}

const typeOf = (kind: "string" | "number" | "boolean"): Step => (input) => typeof input === kind ? input : REFUSED

/**
 * One node's encoding as a plain function, built once: what Effect's parser does for the same
 * node (the same checks, the same output, keys in the schema's order), without its `Either`s
 * and issues on the way. Any kind it does not know, and a union whose members Effect would
 * reorder by their literal fields, is left to the schema's own encoder.
 */
const step = (ast: AST.AST): Step => {
  switch (ast._tag) {
    case "StringKeyword":
      return typeOf("string")
    case "NumberKeyword":
      return typeOf("number")
    case "BooleanKeyword":
      return typeOf("boolean")
    case "Literal": {
      const literal = ast.literal
      return (input) => input === literal ? input : REFUSED
    }
    case "Refinement": {
      // Effect checks a refinement's predicates on the decoded value, innermost first; for a
      // plain node that value is also what is encoded.
      if (!isPlain(ast)) return ownStep(ast)
      const refinements: Array<AST.Refinement> = []
      for (let node: AST.AST = ast; AST.isRefinement(node); node = node.from) refinements.unshift(node)
      const base = step(withoutRefinements(ast))
      return (input) => {
        const value = base(input)
        if (value === REFUSED) return REFUSED
        for (const refinement of refinements) {
          if (Option.isSome(refinement.filter(value, AST.defaultParseOption, refinement))) return REFUSED
        }
        return value
      }
    }
    case "Transformation": {
      const transformation = ast.transformation
      if (!AST.isFinalTransformation(transformation) && !AST.isComposeTransformation(transformation)) return ownStep(ast)
      const fromType = step(ast.to)
      const toEncoded = step(ast.from)
      const encode = AST.isFinalTransformation(transformation) ? transformation.encode : undefined
      return (input) => {
        const value = fromType(input)
        if (value === REFUSED) return REFUSED
        if (encode === undefined) return toEncoded(value)
        const encoded = encode(value, AST.defaultParseOption, ast, input)
        return Either.isEither(encoded) && Either.isRight(encoded) ? toEncoded(encoded.right) : REFUSED
      }
    }
    case "Union": {
      if (ast.types.some(isTagged)) return ownStep(ast)
      const members = ast.types.map(step)
      return (input) => {
        for (const member of members) {
          const value = member(input)
          if (value !== REFUSED) return value
        }
        return REFUSED
      }
    }
    case "TupleType": {
      if (ast.elements.length > 0 || ast.rest.length !== 1) return ownStep(ast)
      const item = step(ast.rest[0]!.type)
      return (input) => {
        if (!Array.isArray(input)) return REFUSED
        const output: Array<unknown> = new Array(input.length)
        for (let i = 0; i < input.length; i++) {
          const value = item(input[i])
          if (value === REFUSED) return REFUSED
          output[i] = value
        }
        return output
      }
    }
    case "TypeLiteral":
      return typeLiteralStep(ast)
    default:
      return ownStep(ast)
  }
}

const typeLiteralStep = (ast: AST.TypeLiteral): Step => {
  const properties = ast.propertySignatures.map((ps) => ({ name: ps.name, optional: ps.isOptional, encode: step(ps.type) }))
  if (properties.length === 0 && ast.indexSignatures.length === 0) return (input) => input == null ? REFUSED : input
  // Index signatures over string keys only (a record): a key its parameter refuses is left out, as Effect does.
  if (!ast.indexSignatures.every((is) => AST.isStringKeyword(withoutRefinements(is.parameter)))) return ownStep(ast)
  const indexes = ast.indexSignatures.map((is) => ({ key: step(is.parameter), value: step(is.type) }))
  const named = new Set<PropertyKey>(properties.map((p) => p.name))
  return (input) => {
    if (typeof input !== "object" || input === null || Array.isArray(input)) return REFUSED
    const record = input as Record<PropertyKey, unknown>
    const output: Record<PropertyKey, unknown> = {}
    for (const property of properties) {
      if (property.optional && !Object.prototype.hasOwnProperty.call(record, property.name)) continue
      const value = property.encode(record[property.name])
      if (value === REFUSED) return REFUSED
      output[property.name] = value
    }
    for (const index of indexes) {
      for (const key of Object.keys(record)) {
        if (index.key(key) === REFUSED) continue
        const value = index.value(record[key])
        if (value === REFUSED) return REFUSED
        if (!named.has(key)) output[key] = value
      }
    }
    return output
  }
}

/**
 * `Schema.encodeEither(schema)` with the same answers, faster on values it accepts: those are
 * encoded by the compiled steps, and anything they refuse goes to the schema's own encoder,
 * whose error (or value) is the answer.
 */
export const fastEncoder = <A, I>(schema: Schema.Schema<A, I>): (value: A) => Either.Either<I, ParseResult.ParseError> => {
  const own = Schema.encodeEither(schema)
  const compiled = step(schema.ast)
  return (value) => {
    const encoded = compiled(value)
    return encoded === REFUSED ? own(value) : Either.right(encoded as I)
  }
}

/** Answers with `member` (a member of the endpoint's success schema, with its status), built once per endpoint. */
export const encodedAs = <A, I>(member: Schema.Schema<A, I>) => {
  const encode = fastEncoder(member)
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
