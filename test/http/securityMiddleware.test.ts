/**
 * The groups' security middleware on its own: the HttpApi served without the request
 * pipeline (so without the gate's hand-over) refuses every call behind a credential with a
 * 401, a valid key included, and never runs a handler without a principal and its tenant.
 */
import { HttpApiBuilder, HttpServer } from "@effect/platform"
import { Effect, Layer, ManagedRuntime } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { SlotwiseApi } from "../../adapters/http/api.js"
import { HandlersLive } from "../../adapters/http/handlers/index.js"
import { httpServicesLayer } from "../../compose.js"
import { Accounts } from "../../src/accounts/Accounts.js"

const services = ManagedRuntime.make(httpServicesLayer({ storage: "memory" }))
let handler: ReturnType<typeof HttpApiBuilder.toWebHandler>
let secret = ""

beforeAll(async () => {
  // One set of services (one memory storage) for the handlers and the account made here.
  const context = await services.runPromise(Effect.context<ManagedRuntime.ManagedRuntime.Context<typeof services>>())
  handler = HttpApiBuilder.toWebHandler(
    Layer.mergeAll(HttpApiBuilder.api(SlotwiseApi).pipe(Layer.provide(HandlersLive)), HttpServer.layerContext).pipe(
      Layer.provide(Layer.succeedContext(context))
    )
  )
  const created = await services.runPromise(Effect.flatMap(Accounts, (accounts) => accounts.create({ name: "Bypass", plan: "pro" })))
  secret = created.keys.sandbox.secret
})
afterAll(async () => {
  await handler.dispose()
  await services.dispose()
})

describe("the security middleware without the pipeline", () => {
  it("refuses calls behind a credential with a 401, whatever the bearer", async () => {
    for (const authorization of [undefined, "Bearer sk_test_unknown", `Bearer ${secret}`]) {
      for (const path of ["/v1/account", "/v1/services", "/v1/widget/config"]) {
        const response = await handler.handler(
          new Request(`http://x${path}`, authorization === undefined ? {} : { headers: { authorization } })
        )
        expect(response.status, `${path} with ${authorization ?? "no credential"}`).toBe(401)
        expect(await response.text()).not.toContain("Bypass")
      }
    }
  })

  it("refuses the operator's routes with a 401 too", async () => {
    const response = await handler.handler(
      new Request("http://x/admin/v1/accounts/acc_1", { headers: { authorization: "Bearer anything" } })
    )
    expect(response.status).toBe(401)
  })
})
