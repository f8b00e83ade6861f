/**
 * Which endpoints a publishable key may call comes from the endpoints' access annotations;
 * this pins that derived set to the documented one (docs/http.md, "Publishable keys"), so an
 * annotation added or dropped by mistake shows here, and checks the route table the request
 * pipeline decides with reads the same rules.
 */
import { describe, expect, it } from "vitest"
import { SlotwiseApi } from "../../adapters/http/api.js"
import { endpointAccess, publishableEndpoints } from "../../adapters/http/contract/access.js"
import { makeRouteTable } from "../../adapters/http/middleware/routes.js"
import { requiredScopes } from "../../src/auth/access.js"
import { PUBLISHABLE_SCOPES } from "../../src/keys/apiKey.js"

/** The widget's config, services and staff, slots, holds (create, read, release), booking, and booking a series. */
const DOCUMENTED = [
  "GET /v1/widget/config",
  "GET /v1/services",
  "GET /v1/services/:id",
  "GET /v1/staff",
  "GET /v1/staff/:id",
  "GET /v1/availability/slots",
  "POST /v1/availability/holds",
  "GET /v1/availability/holds/:id",
  "DELETE /v1/availability/holds/:id",
  "POST /v1/bookings",
  "POST /v1/booking-series"
]

describe("the endpoints a publishable key may call", () => {
  it("derived from the annotations, are exactly the documented ones", () => {
    expect([...publishableEndpoints(SlotwiseApi)].sort()).toEqual([...DOCUMENTED].sort())
  })

  it("each needs only scopes a publishable key can hold", () => {
    for (const { access, method, path } of endpointAccess(SlotwiseApi)) {
      if (access.auth !== "key" || !access.publishable) continue
      for (const scope of requiredScopes(access)) expect(PUBLISHABLE_SCOPES, `${method} ${path}`).toContain(scope)
    }
  })

  it("the route table the pipeline decides with carries the same rules", () => {
    const table = makeRouteTable(SlotwiseApi)
    for (const { access, method, path } of endpointAccess(SlotwiseApi)) {
      const concrete = path.replace(/:[a-z_]+/g, "x_1")
      expect(table.match(method, concrete), `${method} ${path}`).toMatchObject({ _tag: "Found", access })
    }
    expect(table.match("GET", "/v1/bookings")).toMatchObject({ _tag: "Found", access: { auth: "key", publishable: false } })
  })
})
