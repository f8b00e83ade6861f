/**
 * The authenticator hands a bearer to the credential kind that recognises it, so a second
 * kind (OAuth access tokens) sits beside API keys without changing the HTTP pipeline.
 */
import { Effect, Either } from "effect"
import { describe, expect, it } from "vitest"
import type { Principal } from "../../src/keys/ApiKeys.js"
import { type CredentialKind, makeAuthenticator } from "../../src/auth/Authenticator.js"
import { Unauthorized } from "../../src/domain/errors.js"

const principal = (id: string) => ({ key: { id } }) as unknown as Principal

const kind = (name: string, prefix: string, seen: Array<string>): CredentialKind => ({
  name,
  recognizes: (token) => token.startsWith(prefix),
  authenticate: (token) => {
    seen.push(`${name}:${token}`)
    return token.endsWith("bad") ? Effect.fail(new Unauthorized({ detail: `${name} refused` })) : Effect.succeed(principal(token))
  }
})

describe("makeAuthenticator", () => {
  const seen: Array<string> = []
  const authenticator = makeAuthenticator([kind("an API key", "sk_", seen), kind("an OAuth access token", "at_", seen)])
  const run = (token: string) => Effect.runSync(Effect.either(authenticator.authenticate(token)))

  it("asks only the kind that recognises the token", () => {
    seen.length = 0
    expect(Either.getOrThrow(run("at_123")).key.id).toBe("at_123")
    expect(Either.getOrThrow(run("sk_456")).key.id).toBe("sk_456")
    expect(seen).toEqual(["an OAuth access token:at_123", "an API key:sk_456"])
  })

  it("passes a kind's refusal through", () => {
    const result = run("at_bad")
    expect(Either.isLeft(result) && result.left.detail).toBe("an OAuth access token refused")
  })

  it("refuses a token no kind recognises, naming the kinds, without asking any", () => {
    seen.length = 0
    const result = run("Basic dXNlcjpwYXNz")
    expect(Either.isLeft(result) && result.left.detail).toBe("the credential is not an API key or an OAuth access token")
    expect(seen).toEqual([])
  })
})
