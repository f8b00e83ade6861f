/**
 * The package's public surface: `slotwise/core` is one namespace per feature (each its folder's
 * index.ts), `slotwise/modules` the same namespaces, the root `slotwise` those namespaces plus
 * the Promise facade's names flat; nothing made in src/internal/ is reachable from any of them,
 * and adapters take nothing from src/internal/ either.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "vitest"
import * as Root from "../../index.js"
import { Bookings as BookingsService } from "../../src/bookings/Bookings.js"
import { SlotUnavailable } from "../../src/domain/errors.js"
import * as PublicPage from "../../src/domain/page.js"
import * as Core from "../../src/index.js"
import * as InternalPagination from "../../src/internal/pagination.js"
import * as InternalResources from "../../src/internal/resources.js"
import * as InternalSteps from "../../src/internal/steps.js"
import { CoreLive } from "../../src/layers.js"
import * as Modules from "../../src/modules.js"
import { Storage as StoragePort } from "../../src/ports/storage.js"
import { Staff as StaffMemberSchema } from "../../src/staff/member.js"
import { Staff as StaffService } from "../../src/staff/Staff.js"
import { TestClockAt } from "../../src/testing/testClock.js"
import { resolve, root, sourcesUnder, specifiersOf } from "./imports.js"

/** The namespaces of `slotwise/core`, as docs/library.md lists them. */
const NAMESPACES = [
  "Accounts",
  "Availability",
  "Bookings",
  "CalendarFeeds",
  "Calendars",
  "Clients",
  "Domain",
  "Domains",
  "Errors",
  "Events",
  "Layers",
  "Manage",
  "OAuth",
  "Payments",
  "RateLimits",
  "Recurring",
  "Reminders",
  "Sandbox",
  "Services",
  "Staff",
  "Storage",
  "Testing",
  "Users",
  "Webhooks"
]

/** The Promise facade and the adapters' entry points, flat at the package's root. */
const ROOT_FLAT = [
  "createScheduling",
  "createTestScheduling",
  "SlotwiseError",
  "ValidationError",
  "NotFoundError",
  "ConflictError",
  "SlotUnavailableError",
  "OutsideAvailabilityError",
  "SeriesUnavailableError",
  "InvalidTransitionError",
  "ResourceInUseError",
  "AuthenticationError",
  "PermissionError",
  "RateLimitError",
  "InternalError",
  "SqliteStorageLive",
  "PostgresStorageLive",
  "MemoryStorageLive",
  "createHttpHandler"
]

/** Folders with an index.ts that is not a namespace: the scheduling engine the use cases share. */
const NOT_A_NAMESPACE = ["src/scheduling/index.ts"]

/** Functions and objects made in src/internal/ (not ones it only passes on from public modules). */
const internalValues = (() => {
  const passedOn = new Set<unknown>(Object.values(PublicPage))
  return new Set(
    [InternalPagination, InternalResources, InternalSteps].flatMap((module) => Object.values(module))
      .filter((v) => (typeof v === "function" || (typeof v === "object" && v !== null)) && !passedOn.has(v))
  )
})()

const membersOf = (entry: Record<string, unknown>) =>
  Object.entries(entry).flatMap(([name, value]) =>
    typeof value === "object" && value !== null && NAMESPACES.includes(name)
      ? Object.entries(value).map(([member, v]) => [`${name}.${member}`, v] as const)
      : [[name, value] as const]
  )

describe("the public surface", () => {
  it("slotwise/core is the namespaces only, slotwise/modules the same ones", () => {
    expect(Object.keys(Core).sort()).toEqual([...NAMESPACES].sort())
    for (const name of NAMESPACES) expect(Modules[name as keyof typeof Modules], name).toBe(Core[name as keyof typeof Core])
  })

  it("the root holds the same namespaces and the facade's names flat", () => {
    for (const name of NAMESPACES) expect(Root[name as keyof typeof Root], name).toBe(Core[name as keyof typeof Core])
    for (const name of ROOT_FLAT) expect(Root, name).toHaveProperty(name)
    // The core's schemas and services are reached through their namespace, not flat.
    for (const name of ["BookingCreate", "CoreLive", "Tenant", "SlotUnavailable", "StaffMember"]) expect(Root).not.toHaveProperty(name)
  })

  it("names each feature's use case, schemas and ports in its namespace", () => {
    const same: ReadonlyArray<readonly [string, unknown, unknown]> = [
      ["Bookings.Bookings", Core.Bookings.Bookings, BookingsService],
      ["Staff.Staff", Core.Staff.Staff, StaffService],
      ["Staff.StaffMember", Core.Staff.StaffMember, StaffMemberSchema],
      ["Errors.SlotUnavailable", Core.Errors.SlotUnavailable, SlotUnavailable],
      ["Storage.Storage", Core.Storage.Storage, StoragePort],
      ["Storage.RateLimitStore", Core.Storage.RateLimitStore, Core.RateLimits.RateLimitStore],
      ["Layers.CoreLive", Core.Layers.CoreLive, CoreLive],
      ["Testing.TestClockAt", Core.Testing.TestClockAt, TestClockAt]
    ]
    for (const [name, exported, made] of same) expect(exported, name).toBe(made)
    for (const name of ["BookingCreate", "BookingStatus", "BookingListParams"]) expect(Core.Bookings, name).toHaveProperty(name)
    for (const name of ["Tenant", "deepFreeze", "PasswordHasher", "FeedReader"]) expect(Core.Storage, name).toHaveProperty(name)
    for (const name of ["PageSchema", "decodeInput", "formatInstant"]) expect(Core.Domain, name).toHaveProperty(name)
    // The dispatcher's own machinery stays in its modules.
    for (const name of ["endpointKey", "tenantKey", "decide", "JITTER"]) expect(Core.Webhooks).not.toHaveProperty(name)
  })

  it("every feature folder's index.ts is a namespace of slotwise/core", () => {
    const text = fs.readFileSync(path.join(root, "src/index.ts"), "utf8")
    const files = new Set(sourcesUnder(path.join(root, "src")))
    const exported = new Set(specifiersOf(text).map((specifier) => resolve("src/index.ts", specifier, files)))
    const indexes = [...files].filter((file) => /^src\/[^/]+\/index\.ts$/.test(file) && !NOT_A_NAMESPACE.includes(file))
    expect(indexes.filter((file) => !exported.has(file))).toEqual([])
  })

  it("exports nothing made in src/internal/, from any entry point or namespace", () => {
    expect(internalValues.size).toBeGreaterThan(5)
    const exported = [...membersOf(Root), ...membersOf(Core), ...membersOf(Modules)]
    expect(exported.filter(([, value]) => internalValues.has(value)).map(([name]) => name)).toEqual([])
    const entries = ["index.ts", "src/modules.ts", ...sourcesUnder(path.join(root, "src")).filter((file) => file.endsWith("index.ts"))]
    const files = new Set(sourcesUnder(path.join(root, "src")).concat(sourcesUnder(path.join(root, "adapters"))))
    const internalImports = entries.flatMap((entry) =>
      specifiersOf(fs.readFileSync(path.join(root, entry), "utf8"))
        .filter((specifier) => resolve(entry, specifier, files)?.startsWith("src/internal/"))
        .map((specifier) => `${entry} → ${specifier}`)
    )
    expect(internalImports).toEqual([])
  })

  it("adapters import nothing from src/internal/", () => {
    const files = new Set(sourcesUnder(path.join(root, "src")).concat(sourcesUnder(path.join(root, "adapters"))))
    const crossings = sourcesUnder(path.join(root, "adapters")).flatMap((from) =>
      specifiersOf(fs.readFileSync(path.join(root, from), "utf8"))
        .filter((specifier) => resolve(from, specifier, files)?.startsWith("src/internal/"))
        .map((specifier) => `${from} → ${specifier}`)
    )
    expect(crossings).toEqual([])
  })

  it("keeps every port under src/ports/", () => {
    const tags = /extends Context\.Tag\(/
    const outside = fs.readdirSync(path.join(root, "src"), { recursive: true, encoding: "utf8" })
      .filter((file) => file.endsWith(".ts") && !file.startsWith("ports"))
      .filter((file) => {
        const text = fs.readFileSync(path.join(root, "src", file), "utf8")
        // Services the core provides itself and configuration tags are not ports.
        return tags.test(text) && /port\b/i.test(text.slice(0, 400))
      })
    expect(outside).toEqual([])
  })
})
