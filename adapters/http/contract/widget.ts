/** What the booking widget needs to know about the account behind its publishable key. */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { WidgetConfig } from "../../../src/accounts/widgetConfig.js"
import { doc, key } from "./access.js"
import { authenticated } from "./security.js"

export const WidgetGroup = HttpApiGroup.make("widget")
  .add(
    HttpApiEndpoint.get("config", "/v1/widget/config")
      .addSuccess(WidgetConfig)
      .annotateContext(doc(
        "The account's name, its public branding and whether the booking widget shows \"Powered by Slotwise\" (plan-derived)",
        key("services:read", { publishable: true })
      ))
  )
  .pipe(authenticated)
  .annotate(OpenApi.Title, "Widget")
  .annotate(OpenApi.Description, "Configuration of the embeddable booking widget for a publishable key.")
