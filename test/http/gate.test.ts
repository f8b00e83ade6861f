/**
 * The gate every way into the API admits a request through: who is calling, the visitor a
 * publishable key acts for, and the verdict on the call, from one function.
 */
import { HttpServerRequest } from "@effect/platform"
import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import type { Principal } from "../../src/keys/ApiKeys.js"
import { makeAuthenticator } from "../../src/auth/Authenticator.js"
import type { Caller } from "../../src/auth/access.js"
import { Unauthorized } from "../../src/domain/errors.js"
import { key } from "../../adapters/http/contract/access.js"
import { admitted, handOver, makeGate, noOrigin, type OriginOf } from "../../adapters/http/middleware/gate.js"

const tenant = { account_id: "acc_1", environment: "live" }
const principalOf = (id: string, type: "secret" | "publishable", scopes: ReadonlyArray<string>) =>
  ({ key: { id, type, scopes }, account: { allowed_origins: ["https://shop.example"] }, tenant }) as unknown as Principal

const principals: Record<string, Principal> = {
  sk_reader: principalOf("key_reader", "secret", ["bookings:read"]),
  pk_widget: principalOf("key_widget", "publishable", ["bookings:read", "bookings:write"])
}
const authenticator = makeAuthenticator([{
  name: "an API key",
  recognizes: (token) => token.startsWith("sk_") || token.startsWith("pk_"),
  authenticate: (token) => {
    const principal = principals[token]
    return principal === undefined ? Effect.fail(new Unauthorized({ detail: "unknown API key" })) : Effect.succeed(principal)
  }
}])
const gate = makeGate(authenticator, "operator-token")
const address = () => "203.0.113.7"
const fromOrigin = (origin: string): OriginOf => () => Effect.succeed({ origin, domainOwner: undefined })
const admit = (rule: Parameters<typeof gate>[0], authorization: string | undefined, originOf: OriginOf = noOrigin) =>
  Effect.runSync(gate(rule, authorization, address, originOf))

describe("the gate", () => {
  const read = key("bookings:read")

  it("admits a secret key with the endpoint's scope, acting for its account", () => {
    const passage = admit(read, "Bearer sk_reader")
    expect(passage.verdict._tag).toBe("Allowed")
    expect(passage.principal?.key.id).toBe("key_reader")
    expect(passage.visitor).toBeUndefined()
  })

  it("denies a key without the scope with a 403, and an unknown bearer with a 401 saying why", () => {
    const missing = admit(key("bookings:write"), "Bearer sk_reader").verdict
    expect(missing._tag === "Denied" && missing.error._tag).toBe("Forbidden")
    const unknown = admit(read, "Bearer sk_nobody")
    expect(unknown.caller._tag).toBe("Rejected")
    expect(unknown.verdict._tag === "Denied" && unknown.verdict.error.detail).toBe("unknown API key")
    const anonymous = admit(read, undefined).verdict
    expect(anonymous._tag === "Denied" && anonymous.error._tag).toBe("Unauthorized")
  })

  it("hides a request that matched no route, whatever credential it carries", () => {
    const passage = admit(undefined, "Bearer sk_reader")
    expect(passage.verdict._tag).toBe("Hidden")
    expect(passage.principal?.key.id).toBe("key_reader")
  })

  it("admits a publishable key from an allowed origin only, as a visitor at the client address", () => {
    const seen: Array<Caller["_tag"]> = []
    const allowed = admit(key("bookings:read", { publishable: true }), "Bearer pk_widget", (caller) => {
      seen.push(caller._tag)
      return fromOrigin("https://shop.example")(caller)
    })
    expect(seen).toEqual(["Authenticated"])
    expect(allowed.verdict._tag).toBe("Allowed")
    expect(allowed.visitor).toEqual({ key_id: "key_widget", address: "203.0.113.7" })
    expect(allowed.from.origin).toBe("https://shop.example")

    const elsewhere = admit(key("bookings:read", { publishable: true }), "Bearer pk_widget", fromOrigin("https://evil.example")).verdict
    expect(elsewhere._tag === "Denied" && elsewhere.error.detail).toContain("https://evil.example is not one of them")
    const secretOnly = admit(read, "Bearer pk_widget", fromOrigin("https://shop.example")).verdict
    expect(secretOnly._tag === "Denied" && secretOnly.error._tag).toBe("Forbidden")
  })

  it("lets the operator's token through on operator routes, and hides them from anyone else", () => {
    const admin = { auth: "admin" } as const
    const operator = admit(admin, "Bearer operator-token")
    expect(operator.caller._tag).toBe("Operator")
    expect(operator.verdict._tag).toBe("Allowed")
    expect(admit(admin, "Bearer sk_reader").verdict._tag).toBe("Hidden")
    expect(admit(admin, undefined).verdict._tag).toBe("Hidden")
  })

  it("hands the passage to what the router runs, with the request the body step made, and to nothing else", () => {
    const passage = admit(read, "Bearer sk_reader")
    const original = HttpServerRequest.fromWeb(new Request("http://x/v1/bookings", { method: "POST", body: "{}" }))
    const replaced = original.modify({ url: "/v1/bookings" })
    const asRouted = (request: HttpServerRequest.HttpServerRequest | undefined) =>
      Effect.runSync(Effect.provideService(
        handOver(Effect.all([admitted, HttpServerRequest.HttpServerRequest]), passage, request),
        HttpServerRequest.HttpServerRequest,
        original
      ))
    const [handed, request] = asRouted(replaced)
    expect(handed).toBe(passage)
    expect(request).toBe(replaced)
    expect(asRouted(undefined)[1]).toBe(original)
    expect(Effect.runSync(admitted)).toBeUndefined()
  })
})
