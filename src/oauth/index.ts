/** OAuth: the `OAuthClients` and `OAuthGrants` use cases, a client's schemas and the scopes. */
export * from "./oauthClient.js"
export { OAuthClientListParams, OAuthClients } from "./OAuthClients.js"
export { OAuthGrantListParams, OAuthGrants } from "./OAuthGrants.js"
export { OAuthCollections } from "./collections.js"
