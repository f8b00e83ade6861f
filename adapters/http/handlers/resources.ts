import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { Clients } from "../../../src/Clients.js"
import { publicService, type Service } from "../../../src/domain/service.js"
import { Services } from "../../../src/Services.js"
import { Staff } from "../../../src/Staff.js"
import { SlotwiseApi } from "../api.js"
import { CurrentPrincipal } from "../contract/security.js"
import { asTenant } from "./security.js"

const write = { uninterruptible: true } as const

/** Services as the caller may see them: a publishable key (a web page) never sees the account's metadata. */
const seenByCaller = <A, E, R>(read: Effect.Effect<A, E, R>, shown: (a: A, view: (s: Service) => Service) => A) =>
  Effect.flatMap(CurrentPrincipal, (p) => p.key.type === "publishable" ? Effect.map(read, (a) => shown(a, publicService)) : read)

export const ServicesLive = HttpApiBuilder.group(SlotwiseApi, "services", (handlers) =>
  Effect.gen(function*() {
    const services = yield* Services
    return handlers
      .handle("list", ({ urlParams }) =>
        seenByCaller(asTenant(services.list(urlParams)), (page, view) => ({ ...page, data: page.data.map(view) })))
      .handle("create", ({ payload }) => asTenant(services.create(payload)), write)
      .handle("get", ({ path }) => seenByCaller(asTenant(services.get(path.id)), (service, view) => view(service)))
      .handle("update", ({ path, payload }) => asTenant(services.update(path.id, payload)), write)
      .handle("delete", ({ path }) => asTenant(services.delete(path.id)), write)
  }))

export const StaffLive = HttpApiBuilder.group(SlotwiseApi, "staff", (handlers) =>
  Effect.gen(function*() {
    const staff = yield* Staff
    return handlers
      .handle("list", ({ urlParams }) => asTenant(staff.list(urlParams)))
      .handle("create", ({ payload }) => asTenant(staff.create(payload)), write)
      .handle("get", ({ path }) => asTenant(staff.get(path.id)))
      .handle("update", ({ path, payload }) => asTenant(staff.update(path.id, payload)), write)
      .handle("delete", ({ path }) => asTenant(staff.delete(path.id)), write)
  }))

export const ClientsLive = HttpApiBuilder.group(SlotwiseApi, "clients", (handlers) =>
  Effect.gen(function*() {
    const clients = yield* Clients
    return handlers
      .handle("list", ({ urlParams }) => asTenant(clients.list(urlParams)))
      .handle("create", ({ payload }) => asTenant(clients.create(payload)), write)
      .handle("get", ({ path }) => asTenant(clients.get(path.id)))
      .handle("update", ({ path, payload }) => asTenant(clients.update(path.id, payload)), write)
      .handle("delete", ({ path }) => asTenant(clients.delete(path.id)), write)
  }))
