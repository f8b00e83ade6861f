/** The rate-limit policy (docs/api.md §1), pure: which limit applies and what every response reports. */
import { Effect, Layer, TestClock } from "effect"
import { describe, expect, it } from "@effect/vitest"
import { makeMemoryRateLimitStore } from "../../adapters/memory/ratelimit.js"
import {
  ANONYMOUS_LIMIT,
  decide,
  headersOf,
  isSignInKey,
  MANAGE_LIMITS,
  manageAddressPolicy,
  manageWritePolicy,
  OPERATOR_POLICY,
  policyForCaller,
  PLAN_RATE_LIMITS,
  policyForAddress,
  policyForKey,
  policyForVisitor,
  RateLimiter,
  RateLimitStore,
  refusalOf,
  SIGN_IN_LIMITS,
  signInPolicies,
  WINDOW_MS
} from "../../src/ratelimit/index.js"

describe("which limit applies", () => {
  it("a key counts under its account's plan, per key id", () => {
    expect(PLAN_RATE_LIMITS).toEqual({ free: 60, pro: 600, business: 3000 })
    for (const plan of ["free", "pro", "business"] as const) {
      expect(policyForKey({ plan, rate_limit_per_minute: null }, "key_1")).toEqual({
        key: "key:key_1",
        name: plan,
        limit: PLAN_RATE_LIMITS[plan]
      })
    }
  })

  it("an account's own figure replaces its plan's, lower or higher, and is named custom", () => {
    expect(policyForKey({ plan: "business", rate_limit_per_minute: 5 }, "key_1")).toEqual({ key: "key:key_1", name: "custom", limit: 5 })
    expect(policyForKey({ plan: "free", rate_limit_per_minute: 10_000 }, "key_2")).toMatchObject({ name: "custom", limit: 10_000 })
  })

  it("requests without a credential count per client address under the anonymous limit", () => {
    expect(policyForAddress("203.0.113.9")).toEqual({ key: "ip:203.0.113.9", name: "anonymous", limit: ANONYMOUS_LIMIT })
    expect(policyForAddress("::1").key).not.toBe(policyForAddress("::2").key)
    // A key id and an address never share a counter.
    expect(policyForKey({ plan: "free", rate_limit_per_minute: null }, "1.2.3.4").key).not.toBe(policyForAddress("1.2.3.4").key)
  })
})

describe("a publishable key's visitors", () => {
  it("each client address counts apart under the account's limit, never in the key's own counter", () => {
    const account = { plan: "pro" as const, rate_limit_per_minute: null }
    const visitor = policyForVisitor(account, { key_id: "key_1", address: "203.0.113.9" })
    expect(visitor).toEqual({ key: "visitor:key_1:203.0.113.9", name: "pro", limit: 600 })
    expect(policyForVisitor(account, { key_id: "key_1", address: "2001:db8::1" }).key).not.toBe(visitor.key)
    expect(policyForVisitor(account, { key_id: "key_2", address: "203.0.113.9" }).key).not.toBe(visitor.key)
    expect(visitor.key).not.toBe(policyForKey(account, "key_1").key)
    expect(visitor.key).not.toBe(policyForAddress("203.0.113.9").key)
    expect(policyForVisitor({ plan: "free", rate_limit_per_minute: 5 }, { key_id: "key_1", address: "::1" })).toMatchObject({
      name: "custom",
      limit: 5
    })
  })
})

describe("the policy of each kind of caller", () => {
  const account = { plan: "pro" as const, rate_limit_per_minute: null }
  const principal = { account, key: { id: "key_9" } } as never
  const noAddress = () => {
    throw new Error("the address is read only when it is the counter")
  }

  it("a key, its visitor, the operator and an anonymous address each get their own policy", () => {
    expect(policyForCaller({ _tag: "Authenticated", principal }, noAddress)).toEqual(policyForKey(account, "key_9"))
    expect(policyForCaller({ _tag: "Authenticated", principal }, noAddress, { key_id: "key_9", address: "::1" }))
      .toEqual(policyForVisitor(account, { key_id: "key_9", address: "::1" }))
    expect(policyForCaller({ _tag: "Operator" }, noAddress)).toBe(OPERATOR_POLICY)
    expect(policyForCaller(undefined, () => "198.51.100.4")).toEqual(policyForAddress("198.51.100.4"))
    expect(policyForCaller({ _tag: "Anonymous" }, () => "198.51.100.4")).toEqual(policyForAddress("198.51.100.4"))
  })

  it("sign-in attempts count per account and email and per address, under keys a fallback store recognises", () => {
    const [perEmail, perAddress] = signInPolicies("acc_1", "ann@example.com", "192.0.2.1")
    expect(perEmail).toEqual({ key: "signin:acc_1:ann@example.com", name: "sign-in", limit: SIGN_IN_LIMITS.perEmail })
    expect(perAddress).toEqual({ key: "signin-ip:192.0.2.1", name: "sign-in", limit: SIGN_IN_LIMITS.perAddress })
    expect(isSignInKey(perEmail.key) && isSignInKey(perAddress.key)).toBe(true)
    expect(isSignInKey(policyForAddress("192.0.2.1").key)).toBe(false)
    expect(signInPolicies("acc_1", "a", "b", { perEmail: 1, perAddress: 2 }).map((p) => p.limit)).toEqual([1, 2])
  })

  it("manage links count per address per minute and writes per booking per hour", () => {
    expect(manageAddressPolicy("::1")).toEqual({ key: "manage-ip:::1", name: "manage", limit: MANAGE_LIMITS.perAddressPerMinute })
    const tenant = { account_id: "acc_1", environment: "sandbox" } as never
    expect(manageWritePolicy(tenant, "bkg_1")).toMatchObject({ limit: MANAGE_LIMITS.writesPerBookingPerHour, window_seconds: 3600 })
  })

  it("a refusal names the policy's window and the wait; an allowed request has none", () => {
    const hourly = manageWritePolicy({ account_id: "acc_1", environment: "sandbox" } as never, "bkg_1")
    const refused = refusalOf(hourly, decide(hourly, { count: 11, reset_ms: 1_000 + 90_000 }, 1_000))
    expect(refused).toMatchObject({ retry_after_seconds: 90 })
    expect(refused?.detail).toContain("per hour")
    const minute = policyForAddress("::1")
    expect(refusalOf(minute, decide(minute, { count: 1, reset_ms: 61_000 }, 1_000))).toBeUndefined()
  })
})

describe("a window's decision", () => {
  const policy = { key: "key:k", name: "free", limit: 3 }
  const now = 1_000_000

  it("admits up to the limit, then refuses, never reporting fewer than 0 remaining", () => {
    expect([1, 2, 3, 4, 5].map((count) => decide(policy, { count, reset_ms: now + WINDOW_MS }, now)))
      .toEqual([
        { allowed: true, policy: "free", limit: 3, remaining: 2, reset_seconds: 60 },
        { allowed: true, policy: "free", limit: 3, remaining: 1, reset_seconds: 60 },
        { allowed: true, policy: "free", limit: 3, remaining: 0, reset_seconds: 60 },
        { allowed: false, policy: "free", limit: 3, remaining: 0, reset_seconds: 60 },
        { allowed: false, policy: "free", limit: 3, remaining: 0, reset_seconds: 60 }
      ])
  })

  it("rounds the reset up to whole seconds and reports at least 1 while a window is open", () => {
    const resetIn = (ms: number) => decide(policy, { count: 1, reset_ms: now + ms }, now).reset_seconds
    expect(resetIn(59_001)).toBe(60)
    expect(resetIn(59_000)).toBe(59)
    expect(resetIn(1)).toBe(1)
    expect(resetIn(0)).toBe(1)
  })

  it("reports the X- trio and the IETF draft's fields, and Retry-After only when refused", () => {
    const allowed = headersOf(decide(policy, { count: 1, reset_ms: now + 30_500 }, now))
    expect(allowed).toEqual({
      "x-ratelimit-limit": "3",
      "x-ratelimit-remaining": "2",
      "x-ratelimit-reset": "31",
      "ratelimit-policy": "\"free\";q=3;w=60",
      "ratelimit": "\"free\";r=2;t=31"
    })
    const refused = headersOf(decide(policy, { count: 4, reset_ms: now + 30_500 }, now))
    expect(refused).toMatchObject({ "x-ratelimit-remaining": "0", "retry-after": "31", "ratelimit": "\"free\";r=0;t=31" })
  })
})

describe("windows over time (RateLimiter on the memory store, TestClock)", () => {
  const limiter = RateLimiter.Default.pipe(Layer.provide(Layer.sync(RateLimitStore, makeMemoryRateLimitStore)))
  const policy = { key: "key:k", name: "custom", limit: 2 }

  it.effect("a window starts with the first request and the quota is full again once it ends", () =>
    Effect.gen(function*() {
      const { check } = yield* RateLimiter
      yield* TestClock.setTime(10_000)
      expect((yield* check(policy)).remaining).toBe(1)
      yield* TestClock.adjust("20 seconds")
      expect(yield* check(policy)).toMatchObject({ allowed: true, remaining: 0, reset_seconds: 40 })
      expect(yield* check(policy)).toMatchObject({ allowed: false, remaining: 0, reset_seconds: 40 })
      // Another counter is not affected.
      expect((yield* check({ ...policy, key: "key:other" })).allowed).toBe(true)
      yield* TestClock.adjust("39999 millis")
      expect(yield* check(policy)).toMatchObject({ allowed: false, reset_seconds: 1 })
      yield* TestClock.adjust("1 millis")
      expect(yield* check(policy)).toMatchObject({ allowed: true, remaining: 1, reset_seconds: 60 })
    }).pipe(Effect.provide(limiter)))
})

describe("a spent quota refused in one place (RateLimiter.count and .enforce)", () => {
  const limiter = RateLimiter.Default.pipe(Layer.provide(Layer.sync(RateLimitStore, makeMemoryRateLimitStore)))
  const policy = { key: "manage-write:b", name: "manage-writes", limit: 1, window_seconds: 3600 }

  it.effect("count gives the decision with the policy's refusal once the quota is spent; enforce fails with it", () =>
    Effect.gen(function*() {
      const { count, enforce } = yield* RateLimiter
      yield* TestClock.setTime(0)
      expect((yield* count(policy)).refusal).toBeUndefined()
      const spent = yield* count(policy)
      expect(spent.decision).toMatchObject({ allowed: false, reset_seconds: 3600 })
      expect(spent.refusal).toMatchObject({
        _tag: "RateLimited",
        detail: "rate limit of 1 requests per hour exceeded; retry in 3600 s",
        retry_after_seconds: 3600
      })
      const refused = yield* Effect.flip(enforce(policy))
      expect(refused).toMatchObject({ _tag: "RateLimited", retry_after_seconds: 3600 })
      expect(yield* enforce({ ...policy, key: "manage-write:other" })).toBeUndefined()
    }).pipe(Effect.provide(limiter)))
})
