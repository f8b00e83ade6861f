import { Context } from "effect"
import type { Environment } from "../domain/common.js"

export interface TenantId {
  readonly account_id: string
  readonly environment: Environment
}

/**
 * The account and environment a call acts for. Every storage call requires it in context,
 * so no code path can read or write without naming whose data it is.
 */
export class Tenant extends Context.Tag("slotwise/Tenant")<Tenant, TenantId>() {}
