/** The operator's API for account users (docs/api.md §7): only with the server's admin token. */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { User, UserCreate } from "../../../src/users/user.js"
import { UserListParams } from "../../../src/users/Users.js"
import { adminAccess, doc } from "./access.js"
import { body, IdPath, pageOf } from "./common.js"
import { queryOf } from "./query.js"
import { OperatorAuthentication } from "./security.js"

const UserPath = Schema.Struct({ id: Schema.String, uid: Schema.String })

export const AdminUsersGroup = HttpApiGroup.make("adminUsers")
  .add(
    HttpApiEndpoint.post("create", "/admin/v1/accounts/:id/users")
      .setPath(IdPath)
      .setPayload(body(UserCreate))
      .addSuccess(User, { status: 201 })
      .annotateContext(doc("Create an account user (never returns the password)", adminAccess))
  )
  .add(
    HttpApiEndpoint.get("list", "/admin/v1/accounts/:id/users")
      .setPath(IdPath)
      .setUrlParams(queryOf(UserListParams))
      .addSuccess(pageOf(User, "UserList"))
      .annotateContext(doc("List an account's users", adminAccess))
  )
  .add(
    HttpApiEndpoint.get("get", "/admin/v1/accounts/:id/users/:uid")
      .setPath(UserPath)
      .addSuccess(User)
      .annotateContext(doc("Read an account user", adminAccess))
  )
  .add(
    HttpApiEndpoint.del("remove", "/admin/v1/accounts/:id/users/:uid")
      .setPath(UserPath)
      .addSuccess(User)
      .annotateContext(doc("Delete an account user with every grant they gave", adminAccess))
  )
  .middleware(OperatorAuthentication)
  .annotate(OpenApi.Exclude, true)
