/** The OAuth use cases over a storage layer, with passwords hashed by scrypt. */
import { Layer } from "effect"
import { OAuthClients } from "../../src/oauth/OAuthClients.js"
import { OAuthGrants } from "../../src/oauth/OAuthGrants.js"
import { Users } from "../../src/users/Users.js"
import { ScryptPasswordHasherLive } from "./password.js"

/** Users, OAuth clients and grants; needs `Storage`. */
export const OAuthServicesLive = Layer.mergeAll(Users.Default, OAuthClients.Default).pipe(
  Layer.provideMerge(OAuthGrants.Default),
  Layer.provide(ScryptPasswordHasherLive)
)
