/**
 * Touches to the generated OpenAPI document: every error response is a problem document
 * (`application/problem+json`), and the platform's own decode error, which this server
 * never sends (it answers with `bad_request` / `validation_failed` problems), is dropped.
 */
const DROPPED = new Set(["HttpApiDecodeError", "Issue", "PropertyKey"])

const isDropped = (schema: any) =>
  typeof schema?.$ref === "string" && DROPPED.has(schema.$ref.slice("#/components/schemas/".length))

export const cleanOpenApi = (spec: Record<string, any>): Record<string, any> => {
  for (const item of Object.values<any>(spec.paths ?? {})) {
    for (const op of Object.values<any>(item)) {
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
  }
  for (const name of DROPPED) delete spec.components?.schemas?.[name]
  const bearer = spec.components?.securitySchemes?.bearer
  if (bearer !== undefined) {
    bearer.description = "An API key: `sk_test_…` / `sk_live_…` (secret) or `pk_test_…` / `pk_live_…` (publishable)."
  }
  return spec
}
