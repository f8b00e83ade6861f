import { Effect } from "effect"
import { NotFound } from "../../../src/domain/errors.js"
import { Domains } from "../../../src/domains/Domains.js"
import { SlotwiseApi } from "../api.js"
import { handlerGroup } from "./group.js"

const write = { uninterruptible: true } as const

export const DomainsLive = handlerGroup(SlotwiseApi, "domains", (handlers) =>
  Effect.gen(function*() {
    const domains = yield* Domains
    return handlers
      .handle("list", ({ urlParams }) => domains.list(urlParams))
      .handle("create", ({ payload }) => domains.create(payload), write)
      .handle("get", ({ path }) => domains.get(path.id))
      .handle("delete", ({ path }) => domains.delete(path.id), write)
      .handle("verify", ({ path }) => domains.verify(path.id), write)
  }))

export const TlsLive = handlerGroup(SlotwiseApi, "tls", (handlers) =>
  Effect.gen(function*() {
    const domains = yield* Domains
    return handlers.handle("allowed", ({ urlParams }) => {
      const domain = urlParams.domain.toLowerCase()
      return Effect.flatMap(domains.tlsAllowed(domain), (allowed) =>
        allowed
          ? Effect.succeed({ domain, allowed: true as const })
          : Effect.fail(new NotFound({ detail: `${domain} is not a verified custom domain` })))
    })
  }))
