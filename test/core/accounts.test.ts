/**
 * Account handles and branding in the core: the slug a name gives (accents, punctuation,
 * reserved words, names with no usable letters), the rules a handle must meet, the lookup the
 * hosted pages use, and when "Powered by Slotwise" shows.
 */
import { describe, expect, it } from "@effect/vitest"
import { Context, Effect, Layer, Option } from "effect"
import { MemoryStorageLive } from "../../adapters/memory/storage.js"
import { Accounts } from "../../src/accounts/Accounts.js"
import { ApiKeys } from "../../src/keys/ApiKeys.js"
import { handleBaseOf, handleProblem, NO_BRANDING, showsPoweredBy } from "../../src/accounts/account.js"

const accountsService = Effect.map(
  Layer.build(Accounts.Default.pipe(Layer.provide(ApiKeys.Default), Layer.provide(MemoryStorageLive))),
  (context) => Context.get(context, Accounts)
)

describe("handles from names", () => {
  it("slugs a name: lower case, accents dropped, punctuation runs as one hyphen, room left for a suffix", () => {
    expect(handleBaseOf("Default account")).toBe("default-account")
    expect(handleBaseOf("  Café Müller & Söhne!  ")).toBe("cafe-muller-sohne")
    expect(handleBaseOf("A".repeat(60))).toBe("a".repeat(36))
    expect(handleBaseOf(`${"ab ".repeat(12)}cd`)?.endsWith("-")).toBe(false)
    expect(handleBaseOf("日本語")).toBeUndefined()
    expect(handleBaseOf("Jo")).toBeUndefined()
  })

  it.scoped("creates -2, -3 … on collision, skips reserved words, and falls back to a random handle", () =>
    Effect.gen(function*() {
      const accounts = yield* accountsService
      const handleOf = (name: string) => Effect.map(accounts.create({ name, plan: "free" }), (c) => c.account.handle)
      expect(yield* handleOf("Default account")).toBe("default-account")
      expect(yield* handleOf("Default Account!")).toBe("default-account-2")
      expect(yield* handleOf("default account")).toBe("default-account-3")
      expect(yield* handleOf("Admin")).toBe("admin-2")
      // A name that would make the handle look like the operator's gets a random one.
      for (const name of ["Slotwise Support", "Slotwise", "Support Slotwise"]) {
        const handle = yield* handleOf(name)
        expect(handle).not.toContain("slotwise")
        expect(handleProblem(handle)).toBeUndefined()
      }
      const random = [yield* handleOf("日本語"), yield* handleOf("!!")]
      for (const handle of random) expect(handleProblem(handle)).toBeUndefined()
      expect(random[0]).not.toBe(random[1])
    }))
})

describe("handle rules", () => {
  it("allows 3 to 40 of a-z, 0-9 and inner hyphens, and no reserved word", () => {
    for (const ok of ["abc", "a-b", "studio-9", "x".repeat(40), "0-0"]) expect(handleProblem(ok)).toBeUndefined()
    for (const bad of ["ab", "x".repeat(41), "-abc", "abc-", "ABC", "a_b", "a b", "ab.c", ""])
      expect(handleProblem(bad)).toContain("3 to 40")
    for (
      const reserved of [
        "admin",
        "api",
        "v1",
        "book",
        "manage",
        "docs",
        "widget",
        "oauth",
        "www",
        "health",
        "static",
        "assets",
        "calendar",
        "tls"
      ]
    ) {
      // The short ones fail the length rule first; refused either way.
      expect(handleProblem(reserved)).toContain(reserved.length >= 3 ? "reserved" : "3 to 40")
    }
    // Names that pass for the operator: the words, and any handle with "slotwise" in it.
    for (
      const operatorLike of [
        "security",
        "support",
        "billing",
        "abuse",
        "root",
        "administrator",
        "postmaster",
        "webmaster",
        "signin",
        "system"
      ]
    ) {
      expect(handleProblem(operatorLike)).toBe(`${operatorLike} is reserved for this server's own pages and its operator`)
    }
    for (const withName of ["slotwise", "slotwise-help", "team-slotwise", "myslotwise", "a-slotwise-b"]) {
      expect(handleProblem(withName)).toBe(`${withName} is reserved: a handle with "slotwise" in it could pass for this server's operator`)
    }
    for (const fine of ["salon-nord", "support-group-yoga", "rootstock", "securitas-studio"]) expect(handleProblem(fine)).toBeUndefined()
  })
})

describe("byHandle", () => {
  it.scoped("finds the account by its current handle only; a former, unknown or malformed handle finds none", () =>
    Effect.gen(function*() {
      const accounts = yield* accountsService
      const { account } = yield* accounts.create({ name: "Lookup Salon", plan: "pro" })
      expect(Option.map(yield* accounts.byHandle("lookup-salon"), (a) => a.id)).toEqual(Option.some(account.id))
      yield* accounts.updateSettings(account.id, { handle: "lookup-renamed" })
      expect(yield* accounts.byHandle("lookup-salon")).toEqual(Option.none())
      expect(Option.map(yield* accounts.byHandle("lookup-renamed"), (a) => a.handle)).toEqual(Option.some("lookup-renamed"))
      expect(yield* accounts.byHandle("nobody-here")).toEqual(Option.none())
      expect(yield* accounts.byHandle("../Lookup")).toEqual(Option.none())
    }))
})

describe("Powered by Slotwise", () => {
  it("shows unless a pro or business account hides it; on free a kept choice has no effect", () => {
    const hidden = { ...NO_BRANDING, hide_powered_by: true }
    expect(showsPoweredBy({ plan: "free", branding: NO_BRANDING })).toBe(true)
    expect(showsPoweredBy({ plan: "free", branding: hidden })).toBe(true)
    expect(showsPoweredBy({ plan: "pro", branding: NO_BRANDING })).toBe(true)
    expect(showsPoweredBy({ plan: "pro", branding: hidden })).toBe(false)
    expect(showsPoweredBy({ plan: "business", branding: hidden })).toBe(false)
  })
})
