/**
 * Query-string schemas derived from the core's list and lookup parameters: a query value is
 * text, so each field's core schema is kept and preceded by the one conversion it needs
 * (whole numbers, booleans, lists given as `a,b` or repeated). Unknown parameters are
 * refused and every invalid one is reported, as for bodies.
 */
import { JSONSchema, ParseResult, Schema, SchemaAST as AST } from "effect"
import { decodedAs } from "./common.js"

const IntegerText = Schema.transformOrFail(Schema.String, Schema.Number, {
  strict: true,
  decode: (s, _, ast) =>
    /^-?\d{1,16}$/.test(s) ? ParseResult.succeed(Number(s)) : ParseResult.fail(new ParseResult.Type(ast, s, "must be a whole number")),
  encode: (n) => ParseResult.succeed(String(n))
}).annotations({ description: "a whole number" })

const BooleanText = Schema.transformOrFail(Schema.String, Schema.Boolean, {
  strict: true,
  decode: (s, _, ast) =>
    s === "true" ? ParseResult.succeed(true) : s === "false" ?
      ParseResult.succeed(false) :
      ParseResult.fail(new ParseResult.Type(ast, s, "must be true or false")),
  encode: (b) => ParseResult.succeed(b ? "true" : "false")
})

/** `a,b`, or the parameter repeated: one list either way. */
const ListText = Schema.transform(Schema.Union(Schema.String, Schema.Array(Schema.String)), Schema.Array(Schema.String), {
  strict: true,
  decode: (v) => (typeof v === "string" ? [v] : v).flatMap((s) => s.split(",")).filter((s) => s.length > 0),
  encode: (list) => list.join(",")
})

type Kind = "number" | "boolean" | "list" | "text"

const kindOf = (ast: AST.AST): Kind => {
  const encoded = AST.encodedAST(ast)
  switch (encoded._tag) {
    case "NumberKeyword":
      return "number"
    case "BooleanKeyword":
      return "boolean"
    case "TupleType":
      return "list"
    case "Union":
      return encoded.types.some((t) => t._tag === "TupleType") ? "list" : "text"
    default:
      return "text"
  }
}

const convert = (schema: Schema.Schema.AnyNoContext): Schema.Schema.AnyNoContext => {
  switch (kindOf(schema.ast)) {
    case "number":
      return Schema.compose(IntegerText, schema as Schema.Schema<any, number>, { strict: false })
    case "boolean":
      return Schema.compose(BooleanText, schema as Schema.Schema<any, boolean>, { strict: false })
    case "list":
      return Schema.compose(ListText, schema as Schema.Schema<any, ReadonlyArray<string>>, { strict: false })
    case "text":
      return schema
  }
}

/**
 * The core schema's JSON Schema with its named parts written in place: what the document
 * declares for a converted parameter (`integer` with its bounds, `boolean`, a list of its
 * values), so that generated clients send numbers and booleans; the text on the wire is how
 * a query string carries them.
 */
const declared = (schema: Schema.Schema.AnyNoContext): object => {
  const definitions: Record<string, JSONSchema.JsonSchema7> = {}
  const root = JSONSchema.fromAST(schema.ast, { definitions, target: "openApi3.1", topLevelReferenceStrategy: "skip" })
  const inline = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(inline)
    if (typeof node !== "object" || node === null) return node
    const { $ref, ...rest } = node as Record<string, unknown>
    const named = typeof $ref === "string" ? definitions[$ref.slice("#/$defs/".length)] : undefined
    const out: Record<string, unknown> = named === undefined ? {} : inline(named) as Record<string, unknown>
    for (const [key, value] of Object.entries(rest)) out[key] = inline(value)
    return out
  }
  return inline(root) as object
}

/** The wire form of a parameter, described as the core describes it (not as "a whole number"). */
const fromText = (schema: Schema.Schema.AnyNoContext): Schema.Schema.AnyNoContext => {
  const converted = convert(schema)
  return converted === schema ? converted : converted.annotations({ jsonSchema: declared(schema) })
}

/**
 * The query-string form of a core parameter struct: same names, same rules, same decoded
 * type, with text on the wire.
 */
export const queryOf = <F extends Schema.Struct.Fields>(
  struct: Schema.Struct<F>
): Schema.Schema<Schema.Struct.Type<F>, { readonly [K in keyof F]?: string | ReadonlyArray<string> }> => {
  const fields: Record<string, Schema.Schema.All | Schema.PropertySignature.All> = {}
  for (const [name, field] of Object.entries(struct.fields)) {
    if (Schema.isSchema(field)) {
      fields[name] = fromText(field as Schema.Schema.AnyNoContext)
    } else {
      const ps = (field as any).ast
      const inner = Schema.make(ps._tag === "PropertySignatureDeclaration" ? ps.type : ps.from.type)
      fields[name] = Schema.optionalWith(fromText(inner as Schema.Schema.AnyNoContext), { exact: true })
    }
  }
  // No identifier: the OpenAPI document lists query parameters only from an inline struct.
  return query(Schema.Struct(fields as any) as unknown as Schema.Schema<any, any>) as any
}

/** The struct under a query schema's filters. */
const structOf = (ast: AST.AST): AST.TypeLiteral | undefined =>
  ast._tag === "TypeLiteral" ? ast : ast._tag === "Refinement" ? structOf(ast.from) : undefined

/**
 * A query schema decoded with the core's messages. The platform hands a schema it cannot
 * look into every parameter as a list, so a single value of a non-list parameter is taken
 * out of its list again; a repeated one stays a list and is refused as given more than once.
 * A list parameter given one value reports its error under its own name (`status`, not
 * `status.0`).
 */
const query = <A, I>(schema: Schema.Schema<A, I>): Schema.Schema<A, I> => {
  const lists = new Set(structOf(schema.ast)?.propertySignatures.filter((ps) => kindOf(ps.type) === "list").map((ps) => ps.name))
  const valuesOf = (input: unknown, key: PropertyKey): ReadonlyArray<unknown> => {
    const value = typeof input === "object" && input !== null ? (input as Record<PropertyKey, unknown>)[key] : undefined
    return Array.isArray(value) ? value : value === undefined ? [] : [value]
  }
  /** One value, not a comma-separated list: its error is the parameter's own. */
  const single = (input: unknown, key: PropertyKey): boolean => {
    const values = valuesOf(input, key)
    return values.length === 1 && !String(values[0]).includes(",")
  }
  return decodedAs(
    schema,
    (input) => {
      if (typeof input !== "object" || input === null) return input
      const out: Record<string, unknown> = {}
      for (const [key, value] of Object.entries(input)) {
        out[key] = Array.isArray(value) && value.length === 1 && !lists.has(key) ? value[0] : value
      }
      return out
    },
    (input, fields) => {
      const seen = new Set<string>()
      return fields.map((field) => {
        const key = field.path[0]
        if (key === undefined) return field
        if (!lists.has(key) && valuesOf(input, key).length > 1) return { path: [key], message: "must be given once" }
        if (lists.has(key) && field.path.length === 2 && single(input, key)) return { ...field, path: [key] }
        return field
      }).filter((field) => {
        const path = field.path.map(String).join(".")
        return seen.has(path) ? false : (seen.add(path), true)
      })
    }
  )
}

const withoutIdentifier = (ast: AST.AST): AST.AST => {
  const { [AST.IdentifierAnnotationId]: _, ...annotations } = ast.annotations
  switch (ast._tag) {
    case "Refinement":
      return new AST.Refinement(withoutIdentifier(ast.from), ast.filter, annotations)
    case "TypeLiteral":
      return new AST.TypeLiteral(ast.propertySignatures, ast.indexSignatures, annotations)
    default:
      return ast
  }
}

/**
 * A core query whose every field is already text on the wire, refusing unknown parameters
 * (inlined, so the OpenAPI document lists its parameters).
 */
export const strictQuery = <A, I>(schema: Schema.Schema<A, I>): Schema.Schema<A, I> =>
  query(Schema.make<A, I, never>(withoutIdentifier(schema.ast)))
