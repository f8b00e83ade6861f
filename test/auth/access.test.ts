/**
 * The access decision (src/auth/access.ts), table by table: what each requirement admits
 * for each kind of caller, publishable keys and their origins, scopes, the operator API,
 * and which origins get CORS headers.
 */
import { describe, expect, it } from "vitest"
import type { Principal } from "../../src/keys/ApiKeys.js"
import {
  type AccessDecision,
  type AccessRequirement,
  type Caller,
  corsOrigin,
  decideAccess,
  requiredScopes,
  visitorOf
} from "../../src/auth/access.js"
import type { Account } from "../../src/accounts/account.js"
import { type ApiKey, PUBLISHABLE_SCOPES, type Scope, SCOPES } from "../../src/keys/apiKey.js"
import { Unauthorized } from "../../src/domain/errors.js"
import { visitorAddress } from "../../src/domain/visitor.js"

const SHOP = "https://shop.example.com"

const account = (allowed_origins: ReadonlyArray<string>): Account =>
  ({
    id: "acc_01",
    object: "account",
    name: "Shop",
    plan: "pro",
    allowed_origins,
    rate_limit_per_minute: null,
    limits: { requests_per_minute: 600 },
    metadata: {},
    created_at: "2027-01-01T00:00:00Z",
    updated_at: "2027-01-01T00:00:00Z"
  }) as unknown as Account

const caller = (type: ApiKey["type"], scopes: ReadonlyArray<Scope>, origins: ReadonlyArray<string> = [SHOP]): Caller => ({
  _tag: "Authenticated",
  principal: {
    tenant: { account_id: "acc_01", environment: "sandbox" },
    account: account(origins),
    key: { id: "key_01", type, scopes } as unknown as ApiKey
  } satisfies Principal
})

const secret = caller("secret", SCOPES)
const publishable = caller("publishable", PUBLISHABLE_SCOPES)
const rejected: Caller = { _tag: "Rejected", error: new Unauthorized({ detail: "the API key is unknown or revoked" }) }

const none: AccessRequirement = { auth: "none" }
const admin: AccessRequirement = { auth: "admin" }
const key = (scope?: Scope | ReadonlyArray<Scope>, publishable = false): AccessRequirement => ({ auth: "key", scope, publishable })

/** The outcome as a short string: "allowed", "hidden", or "401: detail" / "403: detail". */
const outcome = (decision: AccessDecision): string =>
  decision._tag === "Allowed"
    ? "allowed"
    : decision._tag === "Hidden"
    ? "hidden"
    : `${decision.error._tag === "Unauthorized" ? 401 : 403}: ${decision.error.detail}`

describe("decideAccess", () => {
  const cases: ReadonlyArray<readonly [string, AccessRequirement, Caller, string | undefined, string | RegExp]> = [
    // No credential needed: anyone, even with a refused credential.
    ["public route, anonymous", none, { _tag: "Anonymous" }, undefined, "allowed"],
    ["public route, refused credential", none, rejected, undefined, "allowed"],
    // The operator API exists only for the operator.
    ["operator route, operator", admin, { _tag: "Operator" }, undefined, "allowed"],
    ["operator route, anonymous", admin, { _tag: "Anonymous" }, undefined, "hidden"],
    ["operator route, a secret key with every scope", admin, secret, undefined, "hidden"],
    ["operator route, wrong token", admin, rejected, undefined, "hidden"],
    // Key routes without a usable key: 401 that says what to send.
    ["key route, no credential", key("bookings:read"), { _tag: "Anonymous" }, undefined, /^401: no credential: send Authorization: Bearer/],
    [
      "key route, Basic scheme",
      key("bookings:read"),
      { _tag: "Malformed", scheme: "Basic" },
      undefined,
      /^401: the Basic authorization scheme is not accepted: send Authorization: Bearer/
    ],
    [
      "key route, a credential with no scheme before it",
      key("bookings:read"),
      { _tag: "Malformed", scheme: "" },
      undefined,
      "401: the Authorization header names no scheme: send Authorization: Bearer <API key>"
    ],
    ["key route, empty bearer", key("bookings:read"), { _tag: "Malformed", scheme: "Bearer" }, undefined, /^401: empty bearer credential/],
    ["key route, refused key", key("bookings:read"), rejected, undefined, "401: the API key is unknown or revoked"],
    ["key route, the operator's token is not an API key", key(), { _tag: "Operator" }, undefined, /^401: /],
    // Scopes: exact, and every one of several.
    ["secret key with the scope", key("bookings:read"), caller("secret", ["bookings:read"]), undefined, "allowed"],
    [
      "read scope does not grant write",
      key("bookings:write"),
      caller("secret", ["bookings:read"]),
      undefined,
      "403: this credential lacks the scope bookings:write"
    ],
    [
      "write scope does not grant read",
      key("bookings:read"),
      caller("secret", ["bookings:write"]),
      undefined,
      "403: this credential lacks the scope bookings:read"
    ],
    [
      "all of several scopes, one missing",
      key(["bookings:write", "clients:write"]),
      caller("secret", ["bookings:write"]),
      undefined,
      "403: this credential lacks the scope clients:write"
    ],
    [
      "all of several scopes, both missing",
      key(["bookings:write", "clients:write"]),
      caller("secret", ["events:read"]),
      undefined,
      "403: this credential lacks the scopes bookings:write, clients:write"
    ],
    [
      "all of several scopes, present",
      key(["bookings:write", "clients:write"]),
      caller("secret", ["clients:write", "bookings:write"]),
      undefined,
      "allowed"
    ],
    ["no scope named: any secret key", key(), caller("secret", ["events:read"]), undefined, "allowed"],
    ["secret keys need no Origin, and a foreign one changes nothing", key("bookings:read"), secret, "https://evil.example", "allowed"],
    // Publishable keys: only where allowed, only from their account's origins.
    ["publishable key, allowed route and origin", key("services:read", true), publishable, SHOP, "allowed"],
    [
      "publishable key on a secret-only route",
      key("bookings:read"),
      caller("publishable", ["bookings:read"]),
      SHOP,
      /^403: publishable keys may only/
    ],
    ["publishable key on a route with no scope", key(), publishable, SHOP, /^403: publishable keys may only/],
    // The refusal names what the endpoint itself takes, from its rule.
    [
      "publishable key on a route with two scopes",
      key(["bookings:write", "clients:write"]),
      publishable,
      SHOP,
      "403: publishable keys may only call the widget's endpoints; this one takes a secret key with the scopes bookings:write, clients:write"
    ],
    [
      "publishable key on a route with one scope",
      key("events:read"),
      publishable,
      SHOP,
      "403: publishable keys may only call the widget's endpoints; this one takes a secret key with the scope events:read"
    ],
    [
      "publishable key on a route any secret key may call",
      key(),
      publishable,
      SHOP,
      "403: publishable keys may only call the widget's endpoints; this one takes a secret key"
    ],
    [
      "publishable key without Origin",
      key("services:read", true),
      publishable,
      undefined,
      "403: publishable keys work only from the account's allowed origins, and this request has no Origin header"
    ],
    [
      "publishable key from another origin",
      key("services:read", true),
      publishable,
      "https://other.example",
      "403: publishable keys work only from the account's allowed origins, and https://other.example is not one of them: allow it with `slotwise accounts update acc_01 --allowed-origin https://other.example` (the flag replaces the list: repeat it for every origin to keep), or with a secret key, PATCH /v1/account {\"allowed_origins\": [..., \"https://other.example\"]}"
    ],
    [
      "an origin that only starts like an allowed one",
      key("services:read", true),
      publishable,
      `${SHOP}.evil.io`,
      /^403: publishable keys work only/
    ],
    ["an allowed origin on another port", key("services:read", true), publishable, `${SHOP}:8443`, /^403: publishable keys work only/],
    ["an allowed origin in other case", key("services:read", true), publishable, SHOP.toUpperCase(), /^403: publishable keys work only/],
    [
      "publishable key whose account allows nothing",
      key("services:read", true),
      caller("publishable", PUBLISHABLE_SCOPES, []),
      SHOP,
      /^403: publishable keys work only/
    ],
    [
      "publishable key still needs the scope",
      key("services:read", true),
      caller("publishable", ["staff:read"], [SHOP]),
      SHOP,
      "403: this credential lacks the scope services:read"
    ]
  ]

  it.each(cases)("%s", (_, rule, who, origin, expected) => {
    const got = outcome(decideAccess(rule, who, origin))
    if (typeof expected === "string") expect(got).toBe(expected)
    else expect(got).toMatch(expected)
  })
})

describe("corsOrigin", () => {
  const cases: ReadonlyArray<readonly [string, Caller, string | undefined, string | undefined]> = [
    ["publishable key from an allowed origin", publishable, SHOP, SHOP],
    ["publishable key from another origin", publishable, "https://other.example", undefined],
    ["publishable key without Origin", publishable, undefined, undefined],
    ["secret key from its account's allowed origin: never", secret, SHOP, undefined],
    ["no credential", { _tag: "Anonymous" }, SHOP, undefined],
    ["refused credential", rejected, SHOP, undefined],
    ["an origin extending an allowed one", publishable, `${SHOP}.evil.io`, undefined]
  ]
  it.each(cases)("%s", (_, who, origin, expected) => {
    expect(corsOrigin(who, origin)).toBe(expected)
  })
})

describe("requiredScopes", () => {
  it("lists one scope, several, or none", () => {
    expect(requiredScopes(key("events:read"))).toEqual(["events:read"])
    expect(requiredScopes(key(["bookings:write", "clients:write"]))).toEqual(["bookings:write", "clients:write"])
    expect(requiredScopes(key())).toEqual([])
    expect(requiredScopes(none)).toEqual([])
    expect(requiredScopes(admin)).toEqual([])
  })
})

describe("visitors", () => {
  const principalOf = (c: Caller) => (c as Extract<Caller, { _tag: "Authenticated" }>).principal

  it("a publishable key acts for a visitor at the client address; a secret key for the account, its address never asked", () => {
    expect(visitorOf(principalOf(publishable), () => "203.0.113.9")).toEqual({ key_id: "key_01", address: "203.0.113.9" })
    expect(visitorOf(principalOf(secret), () => {
      throw new Error("a secret key's address is not needed")
    })).toBeUndefined()
  })

  it("is counted by its IPv4 address, or by the /64 network of its IPv6 address", () => {
    for (
      const [address, counted] of [
        ["203.0.113.9", "203.0.113.9"],
        ["::ffff:203.0.113.9", "203.0.113.9"],
        ["2001:db8:1:2:aaaa:bbbb:cccc:dddd", "2001:db8:1:2::/64"],
        ["2001:0db8:0001:0002::1", "2001:db8:1:2::/64"],
        ["2001:db8::1", "2001:db8:0:0::/64"],
        ["2001:db8:1:2::5%eth0", "2001:db8:1:2::/64"],
        ["::1", "0:0:0:0::/64"],
        ["64:ff9b:1:2::198.51.100.1", "64:ff9b:1:2::/64"],
        ["unknown", "unknown"],
        ["1:2:3", "1:2:3"],
        ["1::2::3", "1::2::3"],
        ["zz::1", "zz::1"]
      ] as const
    ) {
      expect(visitorAddress(address), address).toBe(counted)
    }
    expect(visitorOf(principalOf(publishable), () => "2001:db8:1:2::77")).toEqual({ key_id: "key_01", address: "2001:db8:1:2::/64" })
  })
})
