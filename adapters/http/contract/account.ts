/** The account and its API keys (docs/api.md §2). */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { ApiKeyListParams } from "../../../src/keys/ApiKeys.js"
import { Account, AccountSettingsUpdate } from "../../../src/accounts/account.js"
import { ApiKey, ApiKeyCreate, ApiKeyRotate, ApiKeyWithSecret } from "../../../src/keys/apiKey.js"
import { doc, key } from "./access.js"
import { body, IdPath, NoFields, pageOf } from "./common.js"
import { HandleTakenProblem, PlanRequiredProblem } from "./problems.js"
import { queryOf } from "./query.js"
import { authenticated } from "./security.js"

const keysWrite = key("keys:write")

export const AccountGroup = HttpApiGroup.make("account")
  .add(
    HttpApiEndpoint.get("get", "/v1/account")
      .addSuccess(Account)
      .annotateContext(doc("The account of the credential, with the limits in force", key()))
  )
  .add(
    HttpApiEndpoint.patch("update", "/v1/account")
      .setPayload(body(AccountSettingsUpdate))
      .addSuccess(Account)
      .addError(HandleTakenProblem)
      .addError(PlanRequiredProblem)
      .annotateContext(doc(
        "Change the account's name, handle, branding, booking reminders or the origins its publishable keys may be used from. " +
          "Branding fields given replace the stored ones and `null` clears one; hiding \"Powered by Slotwise\" needs the pro or business plan",
        keysWrite
      ))
  )
  .pipe(authenticated)
  .annotate(OpenApi.Title, "Account")
  .annotate(
    OpenApi.Description,
    "The account the credential belongs to, with its plan and limits; its name, handle, branding and allowed origins."
  )

export const ApiKeysGroup = HttpApiGroup.make("apiKeys")
  .add(
    HttpApiEndpoint.get("list", "/v1/api-keys")
      .setUrlParams(queryOf(ApiKeyListParams))
      .addSuccess(pageOf(ApiKey, "ApiKeyList"))
      .annotateContext(doc("List the keys of this environment (never their secrets)", keysWrite))
  )
  .add(
    HttpApiEndpoint.post("create", "/v1/api-keys")
      .setPayload(body(ApiKeyCreate))
      .addSuccess(ApiKeyWithSecret, { status: 201 })
      .annotateContext(doc("Create a key; its secret is in this response only", keysWrite))
  )
  .add(
    HttpApiEndpoint.post("exchange", "/v1/api-keys/exchange")
      .setPayload(NoFields)
      .addSuccess(ApiKeyWithSecret, { status: 201 })
      .annotateContext(doc("With a sandbox secret key: issue the matching production secret key", keysWrite))
  )
  .add(
    HttpApiEndpoint.get("get", "/v1/api-keys/:id")
      .setPath(IdPath)
      .addSuccess(ApiKey)
      .annotateContext(doc("Read a key (never its secret)", keysWrite))
  )
  .add(
    HttpApiEndpoint.post("rotate", "/v1/api-keys/:id/rotate")
      .setPath(IdPath)
      .setPayload(body(ApiKeyRotate))
      .addSuccess(ApiKeyWithSecret)
      .annotateContext(doc("New secret; the old one works for grace_period_seconds (default 86400, 0 = revoke now)", keysWrite))
  )
  .add(
    HttpApiEndpoint.del("revoke", "/v1/api-keys/:id")
      .setPath(IdPath)
      .addSuccess(ApiKey)
      .annotateContext(doc("Revoke a key and all its secrets at once", keysWrite))
  )
  .pipe(authenticated)
  .annotate(OpenApi.Title, "API keys")
  .annotate(
    OpenApi.Description,
    "Secret and publishable keys per environment: create, rotate, revoke, and exchange a sandbox key for production."
  )
