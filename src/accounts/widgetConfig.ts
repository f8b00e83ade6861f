/** What the booking widget knows about the account behind its publishable key. */
import { Schema } from "effect"
import { DisplayName, LogoUrl, PrimaryColor } from "./account.js"
import { Environment, Name } from "../domain/common.js"

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
    description:
      "whether the widget shows \"Powered by Slotwise\" by default: false only on pro and business with `hide_powered_by`; the widget's `hide_branding` option overrides it on those plans"
  })
}).annotations({ identifier: "WidgetConfig" })
export type WidgetConfig = typeof WidgetConfig.Type
