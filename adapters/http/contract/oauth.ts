/** OAuth clients and the grants users gave them (docs/api.md §7). */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { OAuthClient, OAuthClientCreate, OAuthClientUpdate, OAuthClientWithSecret, OAuthGrant } from "../../../src/oauth/oauthClient.js"
import { OAuthClientListParams } from "../../../src/oauth/OAuthClients.js"
import { OAuthGrantListParams } from "../../../src/oauth/OAuthGrants.js"
import { doc, key } from "./access.js"
import { body, IdPath, NoFields, pageOf } from "./common.js"
import { queryOf } from "./query.js"
import { authenticated } from "./security.js"

const keysWrite = key("keys:write")

export const OAuthClientsGroup = HttpApiGroup.make("oauthClients")
  .add(
    HttpApiEndpoint.get("list", "/v1/oauth-clients")
      .setUrlParams(queryOf(OAuthClientListParams))
      .addSuccess(pageOf(OAuthClient, "OAuthClientList"))
      .annotateContext(doc("List the OAuth clients of this environment (never their secrets)", keysWrite))
  )
  .add(
    HttpApiEndpoint.post("create", "/v1/oauth-clients")
      .setPayload(body(OAuthClientCreate))
      .addSuccess(OAuthClientWithSecret, { status: 201 })
      .annotateContext(doc("Register an OAuth client; a confidential client's secret is in this response only", keysWrite))
  )
  .add(
    HttpApiEndpoint.get("get", "/v1/oauth-clients/:id")
      .setPath(IdPath)
      .addSuccess(OAuthClient)
      .annotateContext(doc("Read an OAuth client", keysWrite))
  )
  .add(
    HttpApiEndpoint.patch("update", "/v1/oauth-clients/:id")
      .setPath(IdPath)
      .setPayload(body(OAuthClientUpdate))
      .addSuccess(OAuthClient)
      .annotateContext(doc("Change an OAuth client's name, redirect URIs, scopes or metadata", keysWrite))
  )
  .add(
    HttpApiEndpoint.post("rotateSecret", "/v1/oauth-clients/:id/rotate-secret")
      .setPath(IdPath)
      .setPayload(NoFields)
      .addSuccess(OAuthClientWithSecret)
      .annotateContext(doc("New secret for a confidential client; the old one stops working at once", keysWrite))
  )
  .add(
    HttpApiEndpoint.del("remove", "/v1/oauth-clients/:id")
      .setPath(IdPath)
      .addSuccess(OAuthClient)
      .annotateContext(doc("Delete an OAuth client with all its grants and tokens", keysWrite))
  )
  .pipe(authenticated)
  .annotate(OpenApi.Title, "OAuth clients")
  .annotate(
    OpenApi.Description,
    "Third-party applications that act on an account through OAuth 2: registration, redirect URIs, scopes and secrets."
  )

export const OAuthGrantsGroup = HttpApiGroup.make("oauthGrants")
  .add(
    HttpApiEndpoint.get("list", "/v1/oauth-grants")
      .setUrlParams(queryOf(OAuthGrantListParams))
      .addSuccess(pageOf(OAuthGrant, "OAuthGrantList"))
      .annotateContext(doc("List what account users authorized OAuth clients to do in this environment", keysWrite))
  )
  .add(
    HttpApiEndpoint.get("get", "/v1/oauth-grants/:id")
      .setPath(IdPath)
      .addSuccess(OAuthGrant)
      .annotateContext(doc("Read a grant", keysWrite))
  )
  .add(
    HttpApiEndpoint.del("revoke", "/v1/oauth-grants/:id")
      .setPath(IdPath)
      .addSuccess(OAuthGrant)
      .annotateContext(doc("Revoke a grant with every token issued under it", keysWrite))
  )
  .pipe(authenticated)
  .annotate(OpenApi.Title, "OAuth grants")
  .annotate(OpenApi.Description, "What account users authorized each OAuth client to do, and revoking it.")
