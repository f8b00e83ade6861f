/**
 * Decoding of every input with the resource's schema: unknown fields are refused and every
 * invalid field is reported at once, each with its path (`client.email`, `weekdays.2`) and
 * one message in the field's own terms. The messages are written here from the schema's
 * structure (types, literal sets, length and range limits) or taken from a filter's own
 * message; they never quote schema text and never echo the offending value, so an error
 * body stays small whatever was sent.
 */
import { type Effect, Either, ParseResult, type Schema, SchemaAST as AST } from "effect"
import { containsNulOrLoneSurrogate, NUL_OR_SURROGATE_MESSAGE } from "./common.js"
import { type FieldError, ValidationFailed } from "./errors.js"

export { containsNulOrLoneSurrogate, NUL_OR_SURROGATE_MESSAGE }

/** One invalid field: its path as keys, and what is wrong with it. */
export interface FieldIssue {
  readonly path: ReadonlyArray<PropertyKey>
  readonly message: string
}

/** The members of a union, nested unions flattened. */
const membersOf = (ast: AST.AST): ReadonlyArray<AST.AST> =>
  ast._tag === "Union" ? ast.types.flatMap(membersOf) : ast._tag === "Suspend" ? membersOf(ast.f()) : [ast]

const literalText = (literal: AST.LiteralValue): string => (literal === null ? "null" : String(literal))

/** A short noun phrase for what `ast` accepts: "a string", "one of a, b", "a list". */
const describe = (ast: AST.AST): string => {
  switch (ast._tag) {
    case "StringKeyword":
    case "TemplateLiteral":
      return "a string"
    case "NumberKeyword":
      return "a number"
    case "BooleanKeyword":
      return "true or false"
    case "Literal":
      return literalText(ast.literal)
    case "Enums":
      return `one of ${ast.enums.map(([, v]) => String(v)).join(", ")}`
    case "TypeLiteral":
      return "an object"
    case "TupleType":
      return "a list"
    case "Union": {
      const members = membersOf(ast)
      const literals = members.filter((m): m is AST.Literal => m._tag === "Literal" && m.literal !== null)
      const parts = literals.length > 1 ? [`one of ${literals.map((l) => literalText(l.literal)).join(", ")}`] : literals.map(describe)
      // `Union(Status, Array(Status))`: "one of a, b, or a list of them".
      const others = members.filter((m) => m._tag !== "Literal" || m.literal === null).map((m) =>
        m._tag === "TupleType" && m.rest.length === 1 && parts.length === 1 && describe(m.rest[0]!.type) === parts[0]
          ? "a list of them"
          : describe(m)
      )
      return [...new Set([...parts, ...others])].join(parts.length === 1 && parts[0]!.includes(",") ? ", or " : " or ")
    }
    case "Refinement":
      return isInt(ast) ? "a whole number" : describe(ast.from)
    case "Transformation":
      return describe(ast.from)
    case "Suspend":
      return describe(ast.f())
    default:
      return "valid"
  }
}

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? "" : "s"}`

/** What a built-in filter (`maxLength`, `between`, `int`, …) requires, from its JSON Schema facet. */
const requirement = (ast: AST.Refinement): string => {
  const facet = AST.getJSONSchemaAnnotation(ast).pipe((o) => (o._tag === "Some" ? (o.value as Record<string, unknown>) : {}))
  const { exclusiveMaximum, exclusiveMinimum, maxItems, maximum, maxLength, minItems, minimum, minLength } = facet as Record<
    string,
    number | undefined
  >
  if (maxLength !== undefined) return `must be at most ${plural(maxLength, "character")}`
  if (minLength !== undefined) return minLength === 1 ? "must not be empty" : `must be at least ${plural(minLength, "character")}`
  if (maxItems !== undefined) return `must have at most ${plural(maxItems, "item")}`
  if (minItems !== undefined) return minItems === 1 ? "must not be empty" : `must have at least ${plural(minItems, "item")}`
  if (minimum !== undefined && maximum !== undefined) return `must be from ${minimum} to ${maximum}`
  if (minimum !== undefined) return minimum === 0 ? "must not be negative" : `must be at least ${minimum}`
  if (maximum !== undefined) return `must be at most ${maximum}`
  if (exclusiveMinimum !== undefined) return exclusiveMinimum === 0 ? "must be positive" : `must be greater than ${exclusiveMinimum}`
  if (exclusiveMaximum !== undefined) return `must be less than ${exclusiveMaximum}`
  return "is invalid"
}

/** The text of a `message` annotation, when it is plain text. */
const annotatedMessage = (ast: AST.AST, issue: ParseResult.ParseIssue): string | undefined => {
  const annotation = AST.getMessageAnnotation(ast)
  if (annotation._tag === "None") return undefined
  const result = annotation.value(issue)
  if (typeof result === "string") return result
  if (typeof result === "object" && result !== null && "message" in result && typeof result.message === "string") {
    return result.message
  }
  return undefined
}

/** The union member a value was meant for, when exactly one got past its first check. */
const isShallow = (issue: ParseResult.ParseIssue): boolean => {
  switch (issue._tag) {
    case "Type":
      return true
    case "Refinement":
      return issue.kind === "From" && isShallow(issue.issue)
    case "Transformation":
      return issue.kind === "Encoded" && isShallow(issue.issue)
    case "Composite":
      return issue.ast._tag === "Union" &&
        (Array.isArray(issue.issues) ? issue.issues : [issue.issues as ParseResult.ParseIssue]).every(isShallow)
    default:
      return false
  }
}

const isInt = (ast: AST.AST): boolean =>
  ast._tag === "Refinement" && AST.getJSONSchemaAnnotation(ast).pipe((o) => o._tag === "Some" && (o.value as any).type === "integer")

/** How a field name is written: what an unknown field's name is repeated in full only when it looks like. */
const FIELD_NAME = /^[a-z][a-zA-Z0-9_]{0,31}$/
const CREDENTIAL_PREFIX = /^(sk|pk)_(test|live)_|^whsec_/

/**
 * An unknown field's name as an error repeats it: whole when it looks like a field name
 * (`nickname`, `staffId`), else its first four characters: a name can be anything a client
 * put there, a pasted secret too, and errors never repeat secrets.
 */
export const shownFieldName = (name: PropertyKey): PropertyKey =>
  typeof name !== "string" || (FIELD_NAME.test(name) && !CREDENTIAL_PREFIX.test(name)) ? name : `${name.slice(0, 4)}…`

const collect = (
  issue: ParseResult.ParseIssue,
  path: ReadonlyArray<PropertyKey>,
  out: Array<FieldIssue>,
  wholeNumber = "must be a whole number"
): void => {
  switch (issue._tag) {
    case "Pointer":
      return collect(issue.issue, [...path, ...(Array.isArray(issue.path) ? issue.path : [issue.path])], out)
    case "Missing":
      out.push({ path, message: "is required" })
      return
    case "Unexpected":
      out.push({
        path: path.length === 0 ? path : [...path.slice(0, -1), shownFieldName(path[path.length - 1]!)],
        message: "is not a known field"
      })
      return
    case "Forbidden":
      out.push({ path, message: "could not be checked" })
      return
    case "Type": {
      const message = issue.message ?? annotatedMessage(issue.ast, issue)
      if (message !== undefined) out.push({ path, message })
      else if (issue.ast._tag === "TypeLiteral" && path.length === 0) out.push({ path, message: "must be a JSON object" })
      else out.push({ path, message: `must be ${describe(issue.ast)}` })
      return
    }
    case "Refinement": {
      // `Int.pipe(between(1, 1000, "must be a whole number from 1 to 1000"))`: the range's
      // message also answers a fraction.
      if (issue.kind === "From") return collect(issue.issue, path, out, annotatedMessage(issue.ast, issue) ?? wholeNumber)
      const message = annotatedMessage(issue.ast, issue) ?? (isInt(issue.ast) ? wholeNumber : undefined)
      if (message !== undefined) {
        out.push({ path, message })
        return
      }
      // A filter that returned its own message(s): a Type with a message, maybe under Pointers.
      const inner = issue.issue
      if (inner._tag === "Type" && inner.message === undefined) {
        out.push({ path, message: requirement(issue.ast) })
        return
      }
      return collect(inner, path, out)
    }
    case "Transformation":
      return collect(issue.issue, path, out)
    case "Composite": {
      if (issue.ast._tag === "Union") return collectUnion(issue, path, out)
      const issues = Array.isArray(issue.issues) ? issue.issues : [issue.issues as ParseResult.ParseIssue]
      for (const each of issues) collect(each, path, out)
      return
    }
  }
}

/**
 * A value that matches no member of a union: `null` (or an optional option's `undefined`) is
 * never the complaint about a value that is not null (undefined); a member the value got into (an object of the right kind, a list) speaks
 * for the union; otherwise the union says what it accepts, once.
 */
const collectUnion = (issue: ParseResult.Composite, path: ReadonlyArray<PropertyKey>, out: Array<FieldIssue>): void => {
  const all = Array.isArray(issue.issues) ? issue.issues : [issue.issues as ParseResult.ParseIssue]
  const relevant = all.filter((each) =>
    !(each._tag === "Type" &&
      (each.ast._tag === "Literal" && each.ast.literal === null && issue.actual !== null ||
        each.ast._tag === "UndefinedKeyword" && issue.actual !== undefined))
  )
  const deep = relevant.filter((each) => !isShallow(each))
  if (deep.length === 1) return collect(deep[0]!, path, out)
  if (relevant.length === 1) return collect(relevant[0]!, path, out)
  const message = annotatedMessage(issue.ast, issue)
  out.push({ path, message: message ?? `must be ${describe(issue.ast)}` })
}

/** The invalid fields of a failed decode: one entry per path, the first complaint about it. */
export const fieldIssuesOf = (issue: ParseResult.ParseIssue): Array<FieldIssue> => {
  const all: Array<FieldIssue> = []
  collect(issue, [], all)
  const seen = new Set<string>()
  return all.filter((e) => {
    const key = pathText(e.path)
    if (seen.has(key)) return false
    seen.add(key)
    return true
  })
}

export const pathText = (path: ReadonlyArray<PropertyKey>): string => path.map(String).join(".")

const asFieldErrors = (issues: ReadonlyArray<FieldIssue>): Array<FieldError> =>
  issues.map((e) => ({ path: pathText(e.path), message: e.message }))

export const fieldErrorsOf = (error: ParseResult.ParseError): Array<FieldError> => asFieldErrors(fieldIssuesOf(error.issue))

/** The one-line summary of a list of field errors ("the body" for the input as a whole). */
export const fieldErrorsDetail = (errors: ReadonlyArray<FieldError>): string => {
  const fields = [...new Set(errors.map((e) => e.path || "the body"))]
  return errors.length === 1
    ? `${fields[0]} ${errors[0]!.message}`
    : fields.length === 1
    ? `${fields[0]} is invalid: ${errors.map((e) => e.message).join("; ")}`
    : `${fields.length} fields are invalid: ${fields.join(", ")}`
}

const refusalFields = (errors: ReadonlyArray<FieldError>) => ({ detail: fieldErrorsDetail(errors), errors })

export const validationFailed = (errors: ReadonlyArray<FieldError>): ValidationFailed => new ValidationFailed(refusalFields(errors))

/**
 * The `validation_failed` of an input a decoder refused, from the issues it made: without
 * the error's own checks of its fields (the decoder made them) and without a stack trace
 * (a 422 shows none); the two cost more than the rest of the refusal.
 */
export const refusedInput = (issues: ReadonlyArray<FieldIssue>): ValidationFailed => {
  // V8's own setting: typed here because the domain is also compiled for the browser.
  const v8 = Error as { stackTraceLimit?: number | undefined }
  const stackTraceLimit = v8.stackTraceLimit
  v8.stackTraceLimit = 0
  try {
    return new ValidationFailed(refusalFields(asFieldErrors(issues)), { disableValidation: true })
  } finally {
    v8.stackTraceLimit = stackTraceLimit
  }
}

export const decodeOptions = { errors: "all", onExcessProperty: "error" } as const

const NUL_OR_SURROGATE_KEY_MESSAGE = "must not have a key that contains a NUL character or an unpaired surrogate"
/** Inputs are walked no deeper than the body step lets a JSON body nest. */
const MAX_WALK_DEPTH = 64

/**
 * Every string of an input holding a NUL or an unpaired surrogate ({@link containsNulOrLoneSurrogate}), as
 * field issues: the value's own path, or for a key, the object holding it (a path never
 * repeats the key). No text field accepts one and no person types one, so the rule is one
 * for every input, every field and every storage, checked here once.
 */
export const nulOrSurrogateIssues = (input: unknown): Array<FieldIssue> => {
  const issues: Array<FieldIssue> = []
  const walk = (value: unknown, path: ReadonlyArray<PropertyKey>, depth: number): void => {
    if (typeof value === "string") {
      if (containsNulOrLoneSurrogate(value)) issues.push({ path, message: NUL_OR_SURROGATE_MESSAGE })
      return
    }
    if (value === null || typeof value !== "object" || depth > MAX_WALK_DEPTH) return
    if (Array.isArray(value)) {
      value.forEach((item, index) => walk(item, [...path, index], depth + 1))
      return
    }
    let badKey = false
    for (const [key, item] of Object.entries(value)) {
      if (containsNulOrLoneSurrogate(key)) badKey = true
      else walk(item, [...path, key], depth + 1)
    }
    if (badKey) issues.push({ path, message: NUL_OR_SURROGATE_KEY_MESSAGE })
  }
  walk(input, [], 0)
  return issues
}

/**
 * The values decoders of one schema have made, by the schema's AST. An input is decoded once:
 * the HTTP layer decodes a body before routing and hands the value to a use case, which
 * decodes its input with a decoder of the same schema; that decoder knows the value as one it
 * (or its twin) made and takes it as it is. Only decoders' own outputs are known, never a
 * caller's object, so nothing unchecked gets through.
 */
const decodedValues = new WeakMap<AST.AST, WeakSet<object>>()
const valuesDecodedWith = (ast: AST.AST): WeakSet<object> => {
  let values = decodedValues.get(ast)
  if (values === undefined) decodedValues.set(ast, values = new WeakSet())
  return values
}

/**
 * A decoder of `schema` under the input rules (unknown fields refused, every error reported,
 * no NUL or unpaired surrogate in any string), failing with one issue per invalid field, each
 * in the core's words. A field holding one is reported as such, whatever else its schema says of it.
 */
export const inputDecoder = <A, I>(schema: Schema.Schema<A, I, never>) => {
  const decode = ParseResult.decodeUnknownEither(schema, decodeOptions)
  const made = valuesDecodedWith(schema.ast)
  return (input: unknown): Either.Either<A, ReadonlyArray<FieldIssue>> => {
    if (typeof input === "object" && input !== null && made.has(input)) return Either.right(input as A)
    const decoded = decode(input)
    const nul = nulOrSurrogateIssues(input)
    if (nul.length === 0) {
      if (Either.isRight(decoded)) {
        const value = decoded.right
        // A decoder that hands back the input itself (an instance check) marks nothing: a
        // caller's own object is never taken unchecked later.
        if (typeof value === "object" && value !== null && value !== input) made.add(value)
        return Either.right(value)
      }
      return Either.left(fieldIssuesOf(decoded.left))
    }
    const nulPaths = new Set(nul.map((issue) => pathText(issue.path)))
    const others = Either.isLeft(decoded)
      ? fieldIssuesOf(decoded.left).filter((issue) =>
        !nulPaths.has(pathText(issue.path)) && !issue.path.some((key) => typeof key === "string" && containsNulOrLoneSurrogate(key))
      )
      : []
    return Either.left([...nul, ...others])
  }
}

/**
 * Decodes `input` with `schema`, or fails with `validation_failed` naming every bad field.
 * The result is an `Either`, itself an Effect: decoding is synchronous, and running it as an
 * Effect program would cost more than the decoding.
 */
export const decodeInput = <A, I>(schema: Schema.Schema<A, I, never>): (input: unknown) => Effect.Effect<A, ValidationFailed> =>
  decodeInputEither(schema)

/** {@link decodeInput} as the plain `Either`, for a caller that goes on with the value in place. */
export const decodeInputEither = <A, I>(schema: Schema.Schema<A, I, never>) => {
  const decode = inputDecoder(schema)
  return (input: unknown): Either.Either<A, ValidationFailed> =>
    Either.mapLeft(decode(input ?? {}), (issues) => validationFailed(asFieldErrors(issues)))
}
