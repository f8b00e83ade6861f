/** What the pipeline learned about the request, for the security middleware and handlers. */
import { FiberRef } from "effect"
import { globalValue } from "effect/GlobalValue"
import type { Principal } from "../../../src/ApiKeys.js"
import type { Visitor } from "../../../src/domain/visitor.js"

export interface RequestAuth {
  readonly principal: Principal | undefined
  readonly operator: boolean
  /** The visitor a publishable key acts for (its client address); undefined for other credentials. */
  readonly visitor?: Visitor | undefined
  /** The client address the request is counted under (X-Forwarded-For only behind a trusted proxy). */
  readonly address: () => string
}

export const currentAuth = globalValue(
  Symbol.for("slotwise/http/currentAuth"),
  () => FiberRef.unsafeMake<RequestAuth>({ principal: undefined, operator: false, address: () => "unknown" })
)
