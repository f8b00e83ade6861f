/**
 * Webhook endpoints and their deliveries (docs/api.md §4 Webhooks). The `whsec_` secret is in the
 * create and rotate-secret responses only; retries, tests and recoveries are queued and sent
 * by the dispatcher, so they answer `202` with what was queued.
 */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import {
  WebhookCreate,
  WebhookDelivery,
  WebhookEndpoint,
  WebhookEndpointWithSecret,
  WebhookRecover,
  WebhookRecovery,
  WebhookRotateSecret,
  WebhookUpdate
} from "../../../src/webhooks/webhook.js"
import { DeliveryListParams, WebhookListParams } from "../../../src/webhooks/Webhooks.js"
import { doc, key } from "./access.js"
import { body, IdPath, NoFields, pageOf } from "./common.js"
import { InvalidTransitionProblem } from "./problems.js"
import { queryOf } from "./query.js"
import { authenticated } from "./security.js"

const read = key("webhooks:read")
const write = key("webhooks:write")

export const DeliveryPath = Schema.Struct({ id: Schema.String, did: Schema.String })

export const WebhooksGroup = HttpApiGroup.make("webhooks")
  .add(
    HttpApiEndpoint.get("list", "/v1/webhooks")
      .setUrlParams(queryOf(WebhookListParams))
      .addSuccess(pageOf(WebhookEndpoint, "WebhookEndpointList"))
      .annotateContext(doc("List webhook endpoints (never their secrets)", read))
  )
  .add(
    HttpApiEndpoint.post("create", "/v1/webhooks")
      .setPayload(body(WebhookCreate))
      .addSuccess(WebhookEndpointWithSecret, { status: 201 })
      .annotateContext(doc(
        "Subscribe a URL to event types (or `*`); the `whsec_` signing secret is in this response only. " +
          "Private, loopback and link-local addresses are refused unless the server allows them",
        write
      ))
  )
  .add(
    HttpApiEndpoint.get("get", "/v1/webhooks/:id")
      .setPath(IdPath)
      .addSuccess(WebhookEndpoint)
      .annotateContext(doc("Read a webhook endpoint, with its status and last error", read))
  )
  .add(
    HttpApiEndpoint.patch("update", "/v1/webhooks/:id")
      .setPath(IdPath)
      .setPayload(body(WebhookUpdate))
      .addSuccess(WebhookEndpoint)
      .annotateContext(doc("Change a webhook endpoint's URL, events, description, active flag or metadata", write))
  )
  .add(
    HttpApiEndpoint.del("delete", "/v1/webhooks/:id")
      .setPath(IdPath)
      .addSuccess(WebhookEndpoint)
      .annotateContext(doc("Delete a webhook endpoint with its deliveries", write))
  )
  .add(
    HttpApiEndpoint.post("rotateSecret", "/v1/webhooks/:id/rotate-secret")
      .setPath(IdPath)
      .setPayload(body(WebhookRotateSecret))
      .addSuccess(WebhookEndpointWithSecret)
      .annotateContext(doc(
        "New signing secret (in this response only); the old one also signs for grace_period_seconds " +
          "(default 86400, 0 = stop now)",
        write
      ))
  )
  .add(
    HttpApiEndpoint.get("listDeliveries", "/v1/webhooks/:id/deliveries")
      .setPath(IdPath)
      .setUrlParams(queryOf(DeliveryListParams))
      .addSuccess(pageOf(WebhookDelivery, "WebhookDeliveryList"))
      .annotateContext(doc("List an endpoint's deliveries, each with its attempts' status code, latency and error", read))
  )
  .add(
    HttpApiEndpoint.get("getDelivery", "/v1/webhooks/:id/deliveries/:did")
      .setPath(DeliveryPath)
      .addSuccess(WebhookDelivery)
      .annotateContext(doc("Read a delivery", read))
  )
  .add(
    HttpApiEndpoint.post("retryDelivery", "/v1/webhooks/:id/deliveries/:did/retry")
      .setPath(DeliveryPath)
      .setPayload(NoFields)
      .addSuccess(WebhookDelivery, { status: 202 })
      .annotateContext(doc(
        "Send a delivery again now (one manual attempt; a waiting one is attempted now). 409 while the endpoint is disabled",
        write
      ))
  )
  .add(
    HttpApiEndpoint.post("sendTest", "/v1/webhooks/:id/test")
      .setPath(IdPath)
      .setPayload(NoFields)
      .addSuccess(WebhookDelivery, { status: 202 })
      .annotateContext(doc("Queue a `webhook.test` event for this endpoint only; returns its delivery", write))
  )
  .add(
    HttpApiEndpoint.post("recover", "/v1/webhooks/:id/recover")
      .setPath(IdPath)
      .setPayload(body(WebhookRecover))
      .addSuccess(WebhookRecovery, { status: 202 })
      .annotateContext(doc(
        "Redeliver what the endpoint missed since `since`: failed deliveries get a manual attempt, events it never " +
          "got (while disabled) get new deliveries, all with their original webhook-id",
        write
      ))
  )
  .addError(InvalidTransitionProblem)
  .pipe(authenticated)
  .annotate(OpenApi.Title, "Webhooks")
  .annotate(
    OpenApi.Description,
    "Endpoints that receive signed events (Standard Webhooks), their deliveries and attempts, retries and recovery."
  )
