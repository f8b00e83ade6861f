/** The sandbox's triggers (docs/api.md §4 Sandbox): sandbox credentials only (403 in production). */
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import type { Scope } from "../../../src/keys/apiKey.js"
import { Event } from "../../../src/events/catalogue.js"
import { SandboxEmit } from "../../../src/sandbox/Sandbox.js"
import { doc, key } from "./access.js"
import { body, NoFields } from "./common.js"
import { authenticated } from "./security.js"

/** Erasing the sandbox takes a key that could have deleted all of it. */
const ERASE_SCOPES: ReadonlyArray<Scope> = [
  "bookings:write",
  "clients:write",
  "services:write",
  "staff:write",
  "availability:write",
  "webhooks:write"
]

export const SandboxGroup = HttpApiGroup.make("sandbox")
  .add(
    HttpApiEndpoint.post("emit", "/v1/sandbox/events")
      .setPayload(body(SandboxEmit))
      .addSuccess(Event, { status: 201 })
      .annotateContext(doc(
        "Emit an event of any catalogue type to the sandbox's subscribers (feed, webhooks), about the resource " +
          "`object_id` or a realistic sample. 403 with a production credential",
        key("webhooks:write")
      ))
  )
  .add(
    HttpApiEndpoint.post("reset", "/v1/sandbox/reset")
      .setPayload(NoFields)
      .addSuccess(HttpApiSchema.NoContent)
      .annotateContext(doc(
        "Erase the sandbox's resources, events, webhook endpoints and deliveries (its API keys stay). " +
          "403 with a production credential",
        key(ERASE_SCOPES)
      ))
  )
  .pipe(authenticated)
  .annotate(OpenApi.Title, "Sandbox")
  .annotate(OpenApi.Description, "Test helpers for sandbox credentials: emit any event, or erase the sandbox.")
