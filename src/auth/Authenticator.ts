/**
 * Authentication: a bearer token becomes the `Principal` it acts as. Each kind of
 * credential (API keys; OAuth access tokens) is a `CredentialKind` that recognises its own
 * tokens by their form and resolves them; the authenticator hands a token to the kind that
 * recognises it. A new kind is added where the layers are composed (`authenticatorLayer`),
 * never in the HTTP pipeline, which only calls `Authenticator.authenticate`.
 */
import { Context, Effect, Layer } from "effect"
import { ApiKeys, type Principal } from "../keys/ApiKeys.js"
import { looksLikeApiKey } from "../keys/apiKey.js"
import { type StorageFailure, Unauthorized } from "../domain/errors.js"

export interface CredentialKind {
  /** The kind as a 401 names it: "an API key (sk_test_…, …)". */
  readonly name: string
  /** Whether a token is of this kind by its form alone (a prefix, a JWT's shape); no I/O. */
  readonly recognizes: (token: string) => boolean
  /** The principal the token stands for, or `Unauthorized` (unknown, revoked, expired). */
  readonly authenticate: (token: string) => Effect.Effect<Principal, Unauthorized | StorageFailure>
}

export interface AuthenticatorService {
  readonly authenticate: (token: string) => Effect.Effect<Principal, Unauthorized | StorageFailure>
}

export class Authenticator extends Context.Tag("slotwise/Authenticator")<Authenticator, AuthenticatorService>() {}

/** Tries the kinds in order; the first that recognises the token decides. */
export const makeAuthenticator = (kinds: ReadonlyArray<CredentialKind>): AuthenticatorService => {
  const unknown = new Unauthorized({ detail: `the credential is not ${kinds.map((k) => k.name).join(" or ")}` })
  return {
    authenticate: (token) => {
      for (const kind of kinds) if (kind.recognizes(token)) return kind.authenticate(token)
      return Effect.fail(unknown)
    }
  }
}

/** API keys as a credential kind. */
export const apiKeyCredentials: Effect.Effect<CredentialKind, never, ApiKeys> = Effect.map(ApiKeys, (keys) => ({
  name: "an API key (sk_test_…, sk_live_…, pk_test_…, pk_live_…)",
  recognizes: looksLikeApiKey,
  authenticate: keys.authenticate
}))

/** The authenticator over API keys and any further kinds (each built from its own services). */
export const authenticatorLayer = <R = never>(
  ...more: ReadonlyArray<Effect.Effect<CredentialKind, never, R>>
): Layer.Layer<Authenticator, never, ApiKeys | R> =>
  Layer.effect(Authenticator, Effect.map(Effect.all([apiKeyCredentials, ...more]), makeAuthenticator))
