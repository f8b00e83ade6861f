/** What the booking widget needs to know about the account behind its publishable key. */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { Environment, Name } from "../../../src/domain/common.js"
import { doc, key } from "./access.js"
import { Authentication } from "./security.js"

export const WidgetConfig = Schema.Struct({
  object: Schema.Literal("widget_config"),
  account_name: Name,
  environment: Environment,
  branding_required: Schema.Boolean.annotations({
    description: "true on the free plan: the widget shows \"Powered by Slotwise\" whatever `hide_branding` says"
  })
}).annotations({ identifier: "WidgetConfig" })
export type WidgetConfig = typeof WidgetConfig.Type

export const WidgetGroup = HttpApiGroup.make("widget")
  .add(
    HttpApiEndpoint.get("config", "/v1/widget/config")
      .addSuccess(WidgetConfig)
      .annotateContext(doc(
        "The account's display name and whether the booking widget must show its branding (plan-derived)",
        key("services:read", { publishable: true })
      ))
  )
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Widget")
  .annotate(OpenApi.Description, "Configuration of the embeddable booking widget for a publishable key.")
