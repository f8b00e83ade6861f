/** What the booking widget needs to know about the account behind its publishable key. */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { DisplayName, LogoUrl, PrimaryColor } from "../../../src/domain/account.js"
import { Environment, Name } from "../../../src/domain/common.js"
import { doc, key } from "./access.js"
import { Authentication } from "./security.js"

export const WidgetConfig = Schema.Struct({
  object: Schema.Literal("widget_config"),
  account_name: Name,
  environment: Environment,
  branding_required: Schema.Boolean.annotations({
    description: "true on the free plan: the widget shows \"Powered by Slotwise\" whatever `hide_branding` says"
  }),
  display_name: Schema.NullOr(DisplayName).annotations({ description: "the account's branding: the name the widget's header shows" }),
  logo_url: Schema.NullOr(LogoUrl).annotations({ description: "the account's branding: the logo the widget's header shows" }),
  primary_color: Schema.NullOr(PrimaryColor).annotations({ description: "the account's branding: the widget's default primary colour" }),
  powered_by: Schema.Boolean.annotations({
    description: "whether the widget shows \"Powered by Slotwise\" by default: false only on pro and business with `hide_powered_by`; the widget's `hide_branding` option overrides it on those plans"
  })
}).annotations({ identifier: "WidgetConfig" })
export type WidgetConfig = typeof WidgetConfig.Type

export const WidgetGroup = HttpApiGroup.make("widget")
  .add(
    HttpApiEndpoint.get("config", "/v1/widget/config")
      .addSuccess(WidgetConfig)
      .annotateContext(doc(
        "The account's name, its public branding and whether the booking widget shows \"Powered by Slotwise\" (plan-derived)",
        key("services:read", { publishable: true })
      ))
  )
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Widget")
  .annotate(OpenApi.Description, "Configuration of the embeddable booking widget for a publishable key.")
