/**
 * Custom domains (docs/api.md §10) and the TLS question a reverse proxy asks before it
 * obtains a certificate for a hostname (Caddy's on-demand TLS `ask`).
 */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { Domain, DomainCreate } from "../../../src/domains/domain.js"
import { DomainListParams } from "../../../src/domains/Domains.js"
import { doc, key, publicAccess } from "./access.js"
import { body, IdPath, NoFields, pageOf } from "./common.js"
import { DomainTakenProblem, PlanRequiredProblem, VerificationFailedProblem } from "./problems.js"
import { queryOf } from "./query.js"
import { authenticated } from "./security.js"

/** Domains are account settings, like keys: the same scope. */
const settings = key("keys:write")

export const DomainsGroup = HttpApiGroup.make("domains")
  .add(
    HttpApiEndpoint.get("list", "/v1/domains")
      .setUrlParams(queryOf(DomainListParams))
      .addSuccess(pageOf(Domain, "DomainList"))
      .annotateContext(doc("List this environment's custom domains", settings))
  )
  .add(
    HttpApiEndpoint.post("create", "/v1/domains")
      .setPayload(body(DomainCreate))
      .addSuccess(Domain, { status: 201 })
      .annotateContext(doc(
        "Add a hostname (plans pro and business): it stays `pending` until `verify` finds the TXT record named in " +
          "`verification`. 409 `domain_taken` when another account or environment has verified it",
        settings
      ))
  )
  .add(
    HttpApiEndpoint.get("get", "/v1/domains/:id")
      .setPath(IdPath)
      .addSuccess(Domain)
      .annotateContext(doc("Read a custom domain", settings))
  )
  .add(
    HttpApiEndpoint.del("delete", "/v1/domains/:id")
      .setPath(IdPath)
      .addSuccess(Domain)
      .annotateContext(doc("Delete a custom domain: it stops routing here and its hostname is free for others", settings))
  )
  .add(
    HttpApiEndpoint.post("verify", "/v1/domains/:id/verify")
      .setPath(IdPath)
      .setPayload(NoFields)
      .addSuccess(Domain)
      .annotateContext(doc(
        "Look up the TXT record and mark the domain `verified`; 422 `verification_failed` says what was found " +
          "(no record, other values, a resolver that failed or timed out)",
        settings
      ))
  )
  .addError(PlanRequiredProblem)
  .addError(DomainTakenProblem)
  .addError(VerificationFailedProblem)
  .pipe(authenticated)
  .annotate(OpenApi.Title, "Custom domains")
  .annotate(
    OpenApi.Description,
    "Hostnames that serve an account's environment, each proved with a TXT record at `_slotwise.<hostname>`."
  )

export const TlsAllowedParams = Schema.Struct({
  domain: Schema.String.pipe(Schema.maxLength(253)).annotations({ description: "the hostname a certificate is wanted for" })
}).annotations({ identifier: "TlsAllowedParams" })

export const TlsAllowed = Schema.Struct({
  domain: Schema.String.annotations({ description: "the hostname asked about" }),
  allowed: Schema.Literal(true).annotations({ description: "always true: a refusal is a 404" })
}).annotations({ identifier: "TlsAllowed" })

export const TlsGroup = HttpApiGroup.make("tls")
  .add(
    HttpApiEndpoint.get("allowed", "/tls/allowed")
      .setUrlParams(queryOf(TlsAllowedParams))
      .addSuccess(TlsAllowed)
      .annotateContext(doc(
        "For a reverse proxy's on-demand TLS: 200 when `domain` is a verified custom domain, else 404. Limited per " +
          "client address",
        publicAccess
      ))
  )
  .annotate(OpenApi.Title, "TLS")
  .annotate(OpenApi.Description, "Whether the server serves a hostname, for certificates issued on demand.")
