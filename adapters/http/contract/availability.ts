/** Availability rules, slots, explain and holds (docs/api.md §3). */
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { AvailabilityListParams, Explanation, ExplainQuery, SlotList, SlotQuery } from "../../../src/availability/Availability.js"
import { AvailabilityCreate, AvailabilityRule, AvailabilityUpdate } from "../../../src/availability/rule.js"
import { Hold, HoldCreate } from "../../../src/availability/hold.js"
import { doc, key } from "./access.js"
import { body, IdPath, pageOf } from "./common.js"
import { HoldExpiredProblem, HoldLimitReachedProblem, OutsideAvailabilityProblem, SlotUnavailableProblem } from "./problems.js"
import { queryOf, strictQuery } from "./query.js"
import { authenticated } from "./security.js"

const read = key("availability:read")

/**
 * The rule as a `201` body. HttpApi caches response encoders per union member, so a union
 * used with two statuses needs members of its own (same schemas, fresh nodes).
 */
const created = <A, I>(member: Schema.Schema<A, I>) =>
  // The status on each member, as the document lists a union's members one by one.
  member.annotations(HttpApiSchema.annotations<A>({ status: 201 }))
const [weekly, date, blocked] = AvailabilityRule.members
const CreatedRule = Schema.Union(created(weekly), created(date), created(blocked))
const write = key("availability:write")

export const AvailabilityGroup = HttpApiGroup.make("availability")
  .add(
    HttpApiEndpoint.get("slots", "/v1/availability/slots")
      .setUrlParams(strictQuery(SlotQuery))
      .addSuccess(SlotList)
      .annotateContext(doc("Bookable starts of a service in a range (at most 62 days)", key("availability:read", { publishable: true })))
  )
  .add(
    HttpApiEndpoint.get("explain", "/v1/availability/explain")
      .setUrlParams(strictQuery(ExplainQuery))
      .addSuccess(Explanation)
      .annotateContext(doc("Why a start is or is not bookable: one reason per failed check", read))
  )
  .add(
    HttpApiEndpoint.post("createHold", "/v1/availability/holds")
      .setPayload(body(HoldCreate))
      .addSuccess(Hold, { status: 201 })
      .addError(HoldLimitReachedProblem)
      .annotateContext(doc(
        "Hold a slot for up to 10 minutes (default 5); with a publishable key up to 3 minutes, a few per client address",
        key("bookings:write", { publishable: true })
      ))
  )
  .add(
    HttpApiEndpoint.get("getHold", "/v1/availability/holds/:id")
      .setPath(IdPath)
      .addSuccess(Hold)
      .annotateContext(doc("Read a hold", key("availability:read", { publishable: true })))
  )
  .add(
    HttpApiEndpoint.del("releaseHold", "/v1/availability/holds/:id")
      .setPath(IdPath)
      .addSuccess(Hold)
      .annotateContext(doc("Release a hold at once", key("bookings:write", { publishable: true })))
  )
  .add(
    HttpApiEndpoint.get("list", "/v1/availability")
      .setUrlParams(queryOf(AvailabilityListParams))
      .addSuccess(pageOf(AvailabilityRule, "AvailabilityList"))
      .annotateContext(doc("List availability rules", read))
  )
  .add(
    HttpApiEndpoint.post("create", "/v1/availability")
      .setPayload(body(AvailabilityCreate))
      .addSuccess(CreatedRule, { status: 201 })
      .annotateContext(doc("Create an availability rule (weekly, date or blocked)", write))
  )
  .add(
    HttpApiEndpoint.get("get", "/v1/availability/:id")
      .setPath(IdPath)
      .addSuccess(AvailabilityRule)
      .annotateContext(doc("Read an availability rule", read))
  )
  .add(
    HttpApiEndpoint.patch("update", "/v1/availability/:id")
      .setPath(IdPath)
      .setPayload(body(AvailabilityUpdate))
      .addSuccess(AvailabilityRule)
      .annotateContext(doc("Update an availability rule", write))
  )
  .add(
    HttpApiEndpoint.del("delete", "/v1/availability/:id")
      .setPath(IdPath)
      .addSuccess(AvailabilityRule)
      .annotateContext(doc("Delete an availability rule", write))
  )
  .addError(SlotUnavailableProblem)
  .addError(OutsideAvailabilityProblem)
  .addError(HoldExpiredProblem)
  .pipe(authenticated)
  .annotate(OpenApi.Title, "Availability")
  .annotate(
    OpenApi.Description,
    "Working hours, dated exceptions and blocked time per staff member; bookable slots, why a start is not bookable, and short holds on a slot."
  )
