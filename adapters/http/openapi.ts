/**
 * Touches to the generated OpenAPI document, all in this one place, for what HttpApi cannot
 * say itself: every error response is a problem document (`application/problem+json`); the
 * platform's own decode error, which this server never sends (it answers with `bad_request` /
 * `validation_failed` problems), is dropped; the headers the request pipeline reads and
 * writes (Idempotency-Key, rate limits, Retry-After, WWW-Authenticate, Idempotent-Replayed)
 * are declared; action bodies are optional; the titles Effect's built-in filters give
 * themselves (`maxLength(200)`, `int`) are dropped, since they name code, not concepts;
 * booking a series through POST /v1/bookings is marked deprecated.
 */
import { MAX_IDEMPOTENCY_KEY_LENGTH } from "../../src/idempotency/Idempotency.js"

const DROPPED = new Set(["HttpApiDecodeError", "Issue", "PropertyKey"])

const isDropped = (schema: any) => typeof schema?.$ref === "string" && DROPPED.has(schema.$ref.slice("#/components/schemas/".length))

const ref = (kind: "headers" | "parameters", name: string) => ({ $ref: `#/components/${kind}/${name}` })

const integerHeader = (description: string) => ({ description, schema: { type: "integer", minimum: 0 } })
const textHeader = (description: string) => ({ description, schema: { type: "string" } })

/** Response headers, by name (components.headers). */
const HEADERS = {
  "X-RateLimit-Limit": integerHeader("Requests allowed per one-minute window for this credential (or client address)."),
  "X-RateLimit-Remaining": integerHeader("Requests left in the current window."),
  "X-RateLimit-Reset": integerHeader("Whole seconds until the quota is full again."),
  "RateLimit": textHeader("The same figures as the IETF draft's field: `\"<policy>\";r=<remaining>;t=<seconds>`."),
  "RateLimit-Policy": textHeader("The quota as the IETF draft's field: `\"<policy>\";q=<limit>;w=60`."),
  "Retry-After": integerHeader("Whole seconds to wait before trying again."),
  "WWW-Authenticate": textHeader(
    "The bearer challenge: `Bearer realm=\"slotwise\"`, with `error=\"invalid_token\"` when a credential was presented."
  ),
  "Idempotent-Replayed": {
    description: "`true` when this is the stored response of an earlier request with the same Idempotency-Key.",
    schema: { type: "string", enum: ["true"] }
  }
} as const

const RATE_LIMIT_HEADERS = ["X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset", "RateLimit", "RateLimit-Policy"]

const IDEMPOTENCY_KEY = {
  name: "Idempotency-Key",
  in: "header",
  required: false,
  description: "Makes the POST safe to retry: a repeat with the same key and body within 24 h replays the first " +
    "response (`Idempotent-Replayed: true`); the same key with another body is `422 idempotency_mismatch`.",
  schema: { type: "string", minLength: 1, maxLength: MAX_IDEMPOTENCY_KEY_LENGTH }
}

/** Titles Effect's filters and keywords give themselves: `maxLength(200)`, `between(1, 7)`, `int`. */
const isMachineTitle = (title: unknown) => typeof title === "string" && /^(?:[a-zA-Z]+\(.*\)|int|unknown|object|string|number)$/.test(title)

const dropMachineTitles = (node: unknown): void => {
  if (Array.isArray(node)) {
    for (const each of node) dropMachineTitles(each)
  } else if (typeof node === "object" && node !== null) {
    const record = node as Record<string, unknown>
    if (isMachineTitle(record.title)) delete record.title
    for (const value of Object.values(record)) dropMachineTitles(value)
  }
}

const problemResponses = (op: any) => {
  for (const [status, response] of Object.entries<any>(op?.responses ?? {})) {
    if (Number(status) < 400 || response?.content === undefined) continue
    const content: Record<string, any> = {}
    for (const media of Object.values<any>(response.content)) {
      let schema = media.schema
      if (Array.isArray(schema?.anyOf)) {
        const kept = schema.anyOf.filter((s: any) => !isDropped(s))
        schema = kept.length === 1 ? kept[0] : { ...schema, anyOf: kept }
      }
      if (isDropped(schema)) continue
      content["application/problem+json"] = { ...media, schema }
    }
    response.content = content
    if (response.description === "Error" || /did not match/.test(response.description ?? "")) {
      response.description = "Problem details (RFC 9457)"
    }
  }
}

const declareHeaders = (method: string, op: any) => {
  if (method === "post") {
    op.parameters = [...(op.parameters ?? []), ref("parameters", "IdempotencyKey")]
    // An action's body (confirm, test, reset, …) has no fields: sending none is the same.
    const media = op.requestBody?.content?.["application/json"]
    if (media?.schema?.$ref === "#/components/schemas/NoFields") op.requestBody.required = false
  }
  for (const [status, response] of Object.entries<any>(op?.responses ?? {})) {
    const headers: Record<string, unknown> = { ...response.headers }
    for (const name of RATE_LIMIT_HEADERS) headers[name] = ref("headers", name)
    if (status === "429") headers["Retry-After"] = ref("headers", "Retry-After")
    if (status === "401") headers["WWW-Authenticate"] = ref("headers", "WWW-Authenticate")
    if (method === "post" && Number(status) < 300) headers["Idempotent-Replayed"] = ref("headers", "Idempotent-Replayed")
    response.headers = headers
  }
}

const STATUS_NAMES: Record<string, string> = {
  400: "BadRequest",
  401: "Unauthorized",
  403: "Forbidden",
  404: "NotFound",
  405: "MethodNotAllowed",
  409: "Conflict",
  413: "PayloadTooLarge",
  415: "UnsupportedMediaType",
  422: "UnprocessableContent",
  429: "TooManyRequests",
  500: "InternalError",
  503: "ServiceUnavailable"
}

/**
 * Error responses are the same on most operations: each distinct one is written once under
 * components.responses (`Conflict`, `Conflict2`, … when an operation adds problems of its own)
 * and referenced, which keeps the document a fraction of its size.
 */
const shareErrorResponses = (spec: Record<string, any>) => {
  const names = new Map<string, string>()
  const shared: Record<string, unknown> = {}
  const counts = new Map<string, number>()
  for (const item of Object.values<any>(spec.paths ?? {})) {
    for (const op of Object.values<any>(item)) {
      for (const [status, response] of Object.entries<any>(op?.responses ?? {})) {
        if (Number(status) < 400) continue
        const key = JSON.stringify(response)
        let name = names.get(key)
        if (name === undefined) {
          const base = STATUS_NAMES[status] ?? `Error${status}`
          const count = (counts.get(base) ?? 0) + 1
          counts.set(base, count)
          name = count === 1 ? base : `${base}${count}`
          names.set(key, name)
          shared[name] = response
        }
        op.responses[status] = { $ref: `#/components/responses/${name}` }
      }
    }
  }
  spec.components.responses = shared
}

/**
 * `Schema.Int` has an identifier of its own, so every whole-number field is written as a
 * `$ref` to an `Int` schema beside its bounds and description: plain `type: integer` instead.
 */
const inlineInt = (node: unknown): unknown => {
  if (Array.isArray(node)) return node.map(inlineInt)
  if (typeof node !== "object" || node === null) return node
  const out: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(node)) {
    if (key === "$ref" && value === "#/components/schemas/Int") out.type = "integer"
    else out[key] = inlineInt(value)
  }
  return out
}

/**
 * A series has its own create (POST /v1/booking-series). POST /v1/bookings still books one
 * from `recurrence` for the callers that do so, but documents a booking only: the fields that
 * ask it for a series stay in its body, marked deprecated.
 */
const deprecateSeriesThroughBookings = (schemas: Record<string, any>) => {
  const fields = schemas.BookingCreate?.properties ?? {}
  for (const name of ["recurrence", "on_conflict"]) {
    const field = fields[name]
    if (field === undefined) continue
    fields[name] = {
      ...field,
      deprecated: true,
      description: `Deprecated: book a series with POST /v1/booking-series. ${field.description ?? ""}`.trim()
    }
  }
}

export const cleanOpenApi = (spec: Record<string, any>): Record<string, any> => {
  for (const item of Object.values<any>(spec.paths ?? {})) {
    for (const [method, op] of Object.entries<any>(item)) {
      problemResponses(op)
      declareHeaders(method, op)
    }
  }
  shareErrorResponses(spec)
  for (const name of DROPPED) delete spec.components?.schemas?.[name]
  spec.components.headers = { ...HEADERS }
  spec.components.parameters = { IdempotencyKey: IDEMPOTENCY_KEY }
  const bearer = spec.components?.securitySchemes?.bearer
  if (bearer !== undefined) {
    bearer.description = "An API key: `sk_test_…` / `sk_live_…` (secret) or `pk_test_…` / `pk_live_…` (publishable)."
  }
  spec.info.contact = { name: "Slotwise", url: "https://slotwise.dev" }
  deprecateSeriesThroughBookings(spec.components.schemas)
  dropMachineTitles(spec.components?.schemas)
  dropMachineTitles(spec.paths)
  delete spec.components.schemas.Int
  spec.paths = inlineInt(spec.paths)
  spec.components.schemas = inlineInt(spec.components.schemas)
  spec.components.responses = inlineInt(spec.components.responses)
  return spec
}
