import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { SlotwiseApi } from "../api.js"
import { CurrentPrincipal } from "../contract/security.js"

export const WidgetLive = HttpApiBuilder.group(SlotwiseApi, "widget", (handlers) =>
  handlers.handle("config", () =>
    Effect.map(CurrentPrincipal, (p) => ({
      object: "widget_config" as const,
      account_name: p.account.name,
      environment: p.tenant.environment,
      branding_required: p.account.plan === "free"
    }))))
