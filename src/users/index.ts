/** Users: the `Users` use case and a user's schemas. */
export * from "./user.js"
export { UserListParams, Users } from "./Users.js"
