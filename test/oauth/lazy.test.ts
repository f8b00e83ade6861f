/**
 * The authorization server starts on its first request, not with the server: until then its
 * cookie keys are not even made; a start that fails (storage refusing) answers 503 and is
 * tried again on the next request.
 */
import { Effect, Layer, ManagedRuntime, Option } from "effect"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import { afterEach, describe, expect, it } from "vitest"
import { makeOAuthHandler, METADATA_PATH } from "../../adapters/oauth/server.js"
import { MemoryRateLimitStoreLive } from "../../adapters/memory/ratelimit.js"
import { AccessServicesLive, MemoryStorageLive } from "../../compose.js"
import { SYSTEM_TENANT } from "../../src/auth/collections.js"
import { StorageFailure } from "../../src/domain/errors.js"
import { ProviderSecretsCollection } from "../../src/oauth/collections.js"
import { Storage } from "../../src/ports/storage.js"
import { Tenant } from "../../src/ports/tenant.js"
import { request } from "../http/harness.js"

/** Memory storage whose next transaction fails once `failNext` is set. */
const flakyStorage = (control: { failNext: boolean }) =>
  Layer.effect(
    Storage,
    Effect.map(Storage, (storage) => ({
      ...storage,
      transaction: <A, E, R>(effect: Effect.Effect<A, E, R>) =>
        Effect.suspend(() => {
          if (!control.failNext) return storage.transaction(effect)
          control.failNext = false
          return Effect.fail(new StorageFailure({ detail: "storage unreachable" }))
        })
    }))
  ).pipe(Layer.provide(MemoryStorageLive))

const cleanups: Array<() => Promise<void>> = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup()
})

const serve = async (control: { failNext: boolean }) => {
  const runtime = ManagedRuntime.make(
    AccessServicesLive.pipe(Layer.provide(MemoryRateLimitStoreLive), Layer.provideMerge(flakyStorage(control)))
  )
  // The handler is made as the server makes it, before listening.
  const oauth = await runtime.runPromise(makeOAuthHandler({ issuer: "http://127.0.0.1" }))
  const server = http.createServer(oauth.node)
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  cleanups.push(async () => {
    server.closeAllConnections()
    await new Promise((resolve) => server.close(resolve))
    await runtime.dispose()
  })
  const cookieKeys = () =>
    runtime.runPromise(
      Effect.flatMap(Storage, (storage) => storage.collection(ProviderSecretsCollection).get("cookie_keys")).pipe(
        Effect.provideService(Tenant, SYSTEM_TENANT)
      )
    )
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, cookieKeys }
}

describe("the authorization server starts on first use", () => {
  it("makes nothing until its first request, then answers it", async () => {
    const { url, cookieKeys } = await serve({ failNext: false })
    expect(Option.isNone(await cookieKeys())).toBe(true)
    const metadata = await request(url, "GET", METADATA_PATH)
    expect(metadata.status).toBe(200)
    expect(metadata.json.issuer).toBe("http://127.0.0.1")
    expect(Option.isSome(await cookieKeys())).toBe(true)
  })

  it("answers 503 when it cannot start, and starts on the next request", async () => {
    const control = { failNext: false }
    const { url, cookieKeys } = await serve(control)
    control.failNext = true
    const refused = await request(url, "GET", METADATA_PATH)
    expect(refused.status).toBe(503)
    expect(refused.headers.get("retry-after")).toBe("1")
    expect(refused.json).toEqual({ error: "temporarily_unavailable", error_description: "the authorization server is starting; try again" })
    expect(Option.isNone(await cookieKeys())).toBe(true)
    const retried = await request(url, "GET", METADATA_PATH)
    expect(retried.status).toBe(200)
    expect(retried.json.token_endpoint).toBe("http://127.0.0.1/oauth/token")
  })
})
