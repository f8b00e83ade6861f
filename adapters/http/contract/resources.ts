/** Services, staff and clients: full CRUD each (docs/api.md §3). */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { ClientListParams } from "../../../src/clients/Clients.js"
import { Client, ClientCreate, ClientUpdate } from "../../../src/clients/client.js"
import type { Scope } from "../../../src/keys/apiKey.js"
import { PublicService, Service, ServiceCreate, ServiceUpdate } from "../../../src/services/service.js"
import { PublicStaff, Staff, StaffCreate, StaffUpdate } from "../../../src/staff/member.js"
import { ServiceListParams } from "../../../src/services/Services.js"
import { StaffListParams } from "../../../src/staff/Staff.js"
import { doc, key } from "./access.js"
import { body, IdPath, pageOf } from "./common.js"
import { ResourceInUseProblem } from "./problems.js"
import { queryOf } from "./query.js"
import { authenticated } from "./security.js"

/** What the reads of services answer: a secret key the service, a publishable key its public view. */
export const ShownService = Schema.Union(Service, PublicService)
/** What the reads of staff answer: a secret key the staff member, a publishable key their public view. */
export const ShownStaff = Schema.Union(Staff, PublicStaff)

/** The five CRUD endpoints of one resource, from its core schemas. */
const crud = <
  const Name extends string,
  R extends Schema.Schema.AnyNoContext,
  C extends Schema.Schema.AnyNoContext,
  U extends Schema.Schema.AnyNoContext,
  L extends Schema.Struct.Fields,
  S extends Schema.Schema.AnyNoContext = R
>(options: {
  readonly name: Name
  readonly path: `/${string}`
  readonly label: string
  readonly resource: R
  readonly create: C
  readonly update: U
  readonly list: Schema.Struct<L>
  readonly read: Scope
  readonly write: Scope
  /** What the reads answer when publishable keys may read too: `resource` or their view of it. */
  readonly shown?: S
}) => {
  const { label, path } = options
  const shown = options.shown ?? options.resource
  const read = key(options.read, { publishable: options.shown !== undefined })
  const write = key(options.write)
  const id = `${path}/:id` as const
  return HttpApiGroup.make(options.name)
    .add(
      HttpApiEndpoint.get("list", path)
        .setUrlParams(queryOf(options.list))
        .addSuccess(pageOf(shown, `${label}List`))
        .annotateContext(doc(`List ${options.name}`, read))
    )
    .add(
      HttpApiEndpoint.post("create", path)
        .setPayload(body(options.create))
        .addSuccess(options.resource, { status: 201 })
        .annotateContext(doc(`Create a ${label.toLowerCase()}`, write))
    )
    .add(
      HttpApiEndpoint.get("get", id)
        .setPath(IdPath)
        .addSuccess(shown)
        .annotateContext(doc(`Read a ${label.toLowerCase()}`, read))
    )
    .add(
      HttpApiEndpoint.patch("update", id)
        .setPath(IdPath)
        .setPayload(body(options.update))
        .addSuccess(options.resource)
        .annotateContext(doc(`Update a ${label.toLowerCase()}`, write))
    )
    .add(
      HttpApiEndpoint.del("delete", id)
        .setPath(IdPath)
        .addSuccess(options.resource)
        .annotateContext(doc(`Delete a ${label.toLowerCase()} (409 resource_in_use with upcoming bookings)`, write))
    )
    .addError(ResourceInUseProblem)
    .pipe(authenticated)
}

export const ServicesGroup = crud({
  name: "services",
  path: "/v1/services",
  label: "Service",
  resource: Service,
  create: ServiceCreate,
  update: ServiceUpdate,
  list: ServiceListParams,
  read: "services:read",
  write: "services:write",
  shown: ShownService
}).annotate(OpenApi.Title, "Services")
  .annotate(OpenApi.Description, "What can be booked: duration, buffers, capacity, notice, price and the staff who provide it.")

export const StaffGroup = crud({
  name: "staff",
  path: "/v1/staff",
  label: "Staff",
  resource: Staff,
  create: StaffCreate,
  update: StaffUpdate,
  list: StaffListParams,
  read: "staff:read",
  write: "staff:write",
  shown: ShownStaff
}).annotate(OpenApi.Title, "Staff")
  .annotate(OpenApi.Description, "The people who provide services, each with a time zone for their working hours.")

export const ClientsGroup = crud({
  name: "clients",
  path: "/v1/clients",
  label: "Client",
  resource: Client,
  create: ClientCreate,
  update: ClientUpdate,
  list: ClientListParams,
  read: "clients:read",
  write: "clients:write"
}).annotate(OpenApi.Title, "Clients")
  .annotate(OpenApi.Description, "The people who book, with their contact details.")
