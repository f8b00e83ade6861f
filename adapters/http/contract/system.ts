import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { doc, publicAccess } from "./access.js"

export const Health = Schema.Struct({
  status: Schema.Literal("ok", "degraded").annotations({ description: "`degraded` while storage is unavailable" }),
  storage: Schema.Literal("ok", "unavailable").annotations({ description: "whether storage answers" }),
  version: Schema.String.annotations({ description: "the server's version" })
}).annotations({ identifier: "Health" })

export const SystemGroup = HttpApiGroup.make("system")
  .add(
    HttpApiEndpoint.get("health", "/health")
      .addSuccess(Health)
      .addError(Health, { status: 503 })
      .annotateContext(doc("Liveness and storage readiness", publicAccess))
  )
  .annotate(OpenApi.Title, "System")
  .annotate(OpenApi.Description, "Liveness and readiness of the server and its storage.")
