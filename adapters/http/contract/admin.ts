/** The operator API (docs/api.md §5): only with the server's admin token; 404 otherwise. */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Account, AccountCreate, AccountUpdate, AccountWithKeys } from "../../../src/accounts/account.js"
import { adminAccess, doc } from "./access.js"
import { body, IdPath } from "./common.js"
import { HandleTakenProblem, PlanRequiredProblem } from "./problems.js"
import { OperatorAuthentication } from "./security.js"

export const AdminGroup = HttpApiGroup.make("admin")
  .add(
    HttpApiEndpoint.post("createAccount", "/admin/v1/accounts")
      .setPayload(body(AccountCreate))
      .addSuccess(AccountWithKeys, { status: 201 })
      .addError(HandleTakenProblem)
      .annotateContext(doc("Create an account with a secret and a publishable key per environment", adminAccess))
  )
  .add(
    HttpApiEndpoint.get("getAccount", "/admin/v1/accounts/:id")
      .setPath(IdPath)
      .addSuccess(Account)
      .annotateContext(doc("Read an account", adminAccess))
  )
  .add(
    HttpApiEndpoint.patch("updateAccount", "/admin/v1/accounts/:id")
      .setPath(IdPath)
      .setPayload(body(AccountUpdate))
      .addSuccess(Account)
      .addError(HandleTakenProblem)
      .addError(PlanRequiredProblem)
      .annotateContext(doc("Change an account's plan, handle, branding, origins or rate limit", adminAccess))
  )
  .middleware(OperatorAuthentication)
  // Not part of the public /v1 reference: the operator API is documented in the README.
  .annotate(OpenApi.Exclude, true)
