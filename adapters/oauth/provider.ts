/** What the authorization server's oidc-provider is built with: its cookie keys, kept in storage, and its import. */
import { Effect, Option } from "effect"
import { SYSTEM_TENANT } from "../../src/auth/collections.js"
import { constantTimeEqual, randomBase62 } from "../../src/auth/crypto.js"
import { ProviderSecretsCollection } from "../../src/oauth/collections.js"
import { SCOPES } from "../../src/keys/apiKey.js"
import { Storage } from "../../src/ports/storage.js"
import { Tenant } from "../../src/ports/tenant.js"
import type Provider from "oidc-provider"

export const ACCESS_TOKEN_TTL_SECONDS = 3600
export const CODE_TTL_SECONDS = 600
export const REFRESH_TOKEN_TTL_SECONDS = 30 * 86_400

/** Where the protocol endpoints answer, below the issuer. */
export const PROVIDER_ROUTES = {
  authorization: "/oauth/authorize",
  token: "/oauth/token",
  revocation: "/oauth/revoke",
  introspection: "/oauth/introspect",
  jwks: "/oauth/jwks"
}

/** The authorization server's metadata (RFC 8414), its endpoints from PROVIDER_ROUTES. */
export const serverMetadata = (issuer: string) => ({
  issuer,
  authorization_endpoint: `${issuer}${PROVIDER_ROUTES.authorization}`,
  token_endpoint: `${issuer}${PROVIDER_ROUTES.token}`,
  revocation_endpoint: `${issuer}${PROVIDER_ROUTES.revocation}`,
  introspection_endpoint: `${issuer}${PROVIDER_ROUTES.introspection}`,
  scopes_supported: SCOPES,
  response_types_supported: ["code"],
  response_modes_supported: ["query"],
  grant_types_supported: ["authorization_code", "refresh_token"],
  code_challenge_methods_supported: ["S256"],
  token_endpoint_auth_methods_supported: ["client_secret_basic", "none"],
  revocation_endpoint_auth_methods_supported: ["client_secret_basic", "none"],
  introspection_endpoint_auth_methods_supported: ["client_secret_basic"],
  authorization_response_iss_parameter_supported: true
})

/** How long each of the provider's records lives, in seconds. */
export const PROVIDER_TTL = {
  AccessToken: ACCESS_TOKEN_TTL_SECONDS,
  AuthorizationCode: CODE_TTL_SECONDS,
  RefreshToken: REFRESH_TOKEN_TTL_SECONDS,
  Interaction: 3600,
  Session: 14 * 86_400,
  Grant: 365 * 86_400
}

/**
 * With an https issuer the cookies are Secure even when TLS ends at a proxy that is not
 * trusted for X-Forwarded-Proto: every context's cookie jar is marked secure.
 */
export const secureCookies = (provider: Provider) => {
  const createContext = provider.createContext.bind(provider)
  provider.createContext = (req, res) => {
    const ctx = createContext(req, res)
    ctx.cookies.secure = true
    return ctx
  }
}

/** Client secrets are stored as SHA-256: `hash` what is presented and compare the hashes in constant time. */
export const compareHashedClientSecrets = (provider: Provider, hash: (presented: string) => Promise<string>) => {
  provider.Client.prototype.compareClientSecret = async function(this: { clientSecret?: string }, actual: string) {
    const stored = this.clientSecret
    return typeof stored === "string" && typeof actual === "string" && constantTimeEqual(await hash(actual), stored)
  }
}

/** The keys that sign the server's cookies: made once, kept in storage, shared by processes. */
export const cookieKeys = Effect.gen(function*() {
  const storage = yield* Storage
  const secrets = storage.collection(ProviderSecretsCollection)
  return yield* Effect.provideService(
    storage.transaction(Effect.gen(function*() {
      const found = yield* secrets.get("cookie_keys")
      if (Option.isSome(found)) return found.value.values
      const values = [randomBase62(43)]
      yield* secrets.insert({ id: "cookie_keys", values })
      return values
    })),
    Tenant,
    SYSTEM_TENANT
  )
})

/**
 * oidc-provider 9 warns at import that Node 20 is not its preferred runtime; it works on
 * Node 20.19+ (the whole OAuth suite runs on 20.20), so that one line is kept out of the
 * server's output. Imported on first use, so a server or test that never mounts OAuth
 * never loads it.
 */
export const importProvider = async () => {
  const warn = console.warn
  console.warn = (...args: Array<unknown>) => {
    if (!(typeof args[0] === "string" && args[0].includes("oidc-provider WARNING: Unsupported runtime"))) warn(...args)
  }
  try {
    return await import("oidc-provider")
  } finally {
    console.warn = warn
  }
}

/** The provider's features: no development pages, revocation and introspection limited to the client's own tokens. */
export const PROVIDER_FEATURES = {
  devInteractions: { enabled: false },
  // A client may revoke and introspect only the tokens issued to it.
  // Revoking an access token ends that token only; revoking a refresh token ends its
  // whole grant (oidc-provider's default revokeGrantPolicy). oidc-provider would revoke
  // every token of the grant for either: an access token is destroyed here, and the
  // answer "not allowed" leaves the rest of its grant alone (the response is 200 either way).
  revocation: {
    enabled: true,
    allowedPolicy: async (
      _ctx: unknown,
      client: { clientId: string },
      token: { clientId?: string; kind: string; destroy(): Promise<void> }
    ) => {
      if (token.clientId !== client.clientId) return false
      if (token.kind !== "AccessToken") return true
      await token.destroy()
      return false
    }
  },
  introspection: {
    enabled: true,
    allowedPolicy: (_ctx: unknown, client: { clientId: string }, token: { clientId?: string }) => token.clientId === client.clientId
  },
  userinfo: { enabled: false },
  rpInitiatedLogout: { enabled: false }
}
