/**
 * The package's public surface: the documented flat names stay (docs/library.md, the
 * README), the by-module namespaces (`slotwise/modules`) name the same things, and nothing
 * made in src/internal/ is reachable from either.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "vitest"
import * as Root from "../../index.js"
import * as Core from "../../src/index.js"
import * as InternalPagination from "../../src/internal/pagination.js"
import * as InternalResources from "../../src/internal/resources.js"
import * as Modules from "../../src/modules.js"
import * as PublicPage from "../../src/domain/page.js"

const root = path.resolve(import.meta.dirname, "../..")

/** Functions and objects made in src/internal/ (not ones it only passes on from public modules). */
const internalValues = (() => {
  const passedOn = new Set<unknown>(Object.values(PublicPage))
  return new Set(
    [...Object.values(InternalPagination), ...Object.values(InternalResources)].filter((v) =>
      (typeof v === "function" || (typeof v === "object" && v !== null)) && !passedOn.has(v)
    )
  )
})()

describe("the public surface", () => {
  it("keeps the documented flat names of the package's root", () => {
    for (
      const name of [
        "createScheduling",
        "createTestScheduling",
        "SlotUnavailableError",
        "Bookings",
        "CoreLive",
        "SqliteStorageLive",
        "Tenant",
        "Events",
        "ErrorCatalog"
      ]
    ) {
      expect(Root, name).toHaveProperty(name)
    }
  })

  it("names the same services, schemas and ports by module as the flat names do", () => {
    const same: ReadonlyArray<readonly [string, unknown, unknown]> = [
      ["Bookings", Modules.Bookings.Bookings, Root.Bookings],
      ["Availability", Modules.Availability.Availability, Root.Availability],
      ["Clients", Modules.Clients.Clients, Root.Clients],
      ["CoreLive", Modules.Layers.CoreLive, Root.CoreLive],
      ["BookingCreate", Modules.Booking.BookingCreate, Root.BookingCreate],
      ["StaffMember", Modules.StaffMember.Staff, Root.StaffMember],
      ["SlotUnavailable", Modules.Errors.SlotUnavailable, Root.SlotUnavailable],
      ["PageSchema", Modules.Page.PageSchema, Root.PageSchema],
      ["Storage", Modules.Storage.Storage, Root.Storage],
      ["Tenant", Modules.Tenant.Tenant, Root.Tenant],
      ["FeedReader", Modules.FeedReader.FeedReader, Root.FeedReader],
      ["PasswordHasher", Modules.PasswordHasher.PasswordHasher, Root.PasswordHasher],
      ["RateLimitStore", Modules.RateLimitStore.RateLimitStore, Modules.RateLimits.RateLimitStore]
    ]
    for (const [name, byModule, flat] of same) expect(byModule, name).toBe(flat)
  })

  it("exports nothing made in src/internal/, flat or by module", () => {
    expect(internalValues.size).toBeGreaterThan(5)
    const exported = [
      ...Object.entries(Root),
      ...Object.entries(Core),
      ...Object.entries(Modules).flatMap(([ns, members]) => Object.entries(members).map(([k, v]) => [`${ns}.${k}`, v] as const))
    ]
    const leaked = exported.filter(([, value]) => internalValues.has(value)).map(([name]) => name)
    expect(leaked).toEqual([])
    for (const entry of ["index.ts", "src/index.ts", "src/modules.ts"]) {
      expect(fs.readFileSync(path.join(root, entry), "utf8"), entry).not.toMatch(/from "\.{1,2}\/(src\/)?internal\//)
    }
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
