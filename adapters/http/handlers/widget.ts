import { Effect } from "effect"
import { showsPoweredBy } from "../../../src/accounts/account.js"
import { SlotwiseApi } from "../api.js"
import { handlerGroup } from "./group.js"
import { CurrentPrincipal } from "../contract/security.js"

export const WidgetLive = handlerGroup(
  SlotwiseApi,
  "widget",
  (handlers) =>
    handlers.handle("config", () =>
      Effect.map(CurrentPrincipal, ({ principal: { account, tenant } }) => {
        const { branding } = account
        return {
          object: "widget_config" as const,
          account_name: account.name,
          environment: tenant.environment,
          branding_required: account.plan === "free",
          display_name: branding.display_name,
          logo_url: branding.logo_url,
          primary_color: branding.primary_color,
          powered_by: showsPoweredBy(account)
        }
      }))
)
