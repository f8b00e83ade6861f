import { Effect } from "effect"
import { Clients } from "../../../src/clients/Clients.js"
import { Services } from "../../../src/services/Services.js"
import { Staff } from "../../../src/staff/Staff.js"
import { SlotwiseApi } from "../api.js"
import { handlerGroup } from "./group.js"
import { asAudience } from "./security.js"

const write = { uninterruptible: true } as const

export const ServicesLive = handlerGroup(SlotwiseApi, "services", (handlers) =>
  Effect.gen(function*() {
    const services = yield* Services
    return handlers
      .handle("list", ({ urlParams }) => asAudience(services.list(urlParams), () => services.listForVisitor(urlParams)))
      .handle("create", ({ payload }) => services.create(payload), write)
      .handle("get", ({ path }) => asAudience(services.get(path.id), () => services.getForVisitor(path.id)))
      .handle("update", ({ path, payload }) => services.update(path.id, payload), write)
      .handle("delete", ({ path }) => services.delete(path.id), write)
  }))

export const StaffLive = handlerGroup(SlotwiseApi, "staff", (handlers) =>
  Effect.gen(function*() {
    const staff = yield* Staff
    return handlers
      .handle("list", ({ urlParams }) => asAudience(staff.list(urlParams), () => staff.listForVisitor(urlParams)))
      .handle("create", ({ payload }) => staff.create(payload), write)
      .handle("get", ({ path }) => asAudience(staff.get(path.id), () => staff.getForVisitor(path.id)))
      .handle("update", ({ path, payload }) => staff.update(path.id, payload), write)
      .handle("delete", ({ path }) => staff.delete(path.id), write)
  }))

export const ClientsLive = handlerGroup(SlotwiseApi, "clients", (handlers) =>
  Effect.gen(function*() {
    const clients = yield* Clients
    return handlers
      .handle("list", ({ urlParams }) => clients.list(urlParams))
      .handle("create", ({ payload }) => clients.create(payload), write)
      .handle("get", ({ path }) => clients.get(path.id))
      .handle("update", ({ path, payload }) => clients.update(path.id, payload), write)
      .handle("delete", ({ path }) => clients.delete(path.id), write)
  }))
