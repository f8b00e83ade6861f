/**
 * Rules written once: each test names a rule's one home and fails when a copy of it is
 * written again elsewhere in the core or the adapters (or the widget, where it bundles one).
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "vitest"

const root = path.resolve(import.meta.dirname, "../..")

/** The TypeScript sources under the given folders (and root files), as paths relative to the project root. */
const sources = (...dirs: ReadonlyArray<string>): Array<string> =>
  dirs.flatMap((dir) => {
    const full = path.join(root, dir)
    if (fs.statSync(full).isFile()) return [dir]
    return fs.readdirSync(full, { recursive: true, encoding: "utf8" })
      .filter((file) => file.endsWith(".ts") && !file.endsWith(".d.ts"))
      .map((file) => path.posix.join(dir, file.split(path.sep).join("/")))
  }).sort()

/** The files among `files` whose text matches `pattern`. */
const filesMatching = (files: ReadonlyArray<string>, pattern: RegExp): Array<string> =>
  files.filter((file) => pattern.test(fs.readFileSync(path.join(root, file), "utf8")))

const CODE = ["src", "adapters", "widget", "compose.ts", "index.ts", "main.ts", "schedulingOptions.ts"]

describe("one copy of each rule", () => {
  it("the client address is read from X-Forwarded-For in one place", () => {
    expect(filesMatching(sources(...CODE), /\[\s*["']x-forwarded-for["']\s*\]/i)).toEqual(["adapters/http/clientAddress.ts"])
  })

  it("a spent rate-limit quota is turned into its refusal only by the rate limiter", () => {
    const outsideTheLimiter = sources(...CODE).filter((file) => !file.startsWith("src/ratelimit/"))
    expect(filesMatching(outsideTheLimiter, /\brefusalOf\b.*ratelimit\/policy|\.allowed\b|\.reset_seconds\b/)).toEqual([])
  })

  it("a storage location is classified (PostgreSQL URL or SQLite file) in one place", () => {
    expect(filesMatching(sources(...CODE), /\^postgres\(ql\)\?/)).toEqual(["adapters/cli/storageLocation.ts"])
  })

  it("a trailing slash is taken off in one place, which the widget bundles too", () => {
    expect(filesMatching(sources(...CODE), /\\\/\+\$\//)).toEqual(["src/ports/trailingSlash.ts"])
    // The widget may bundle only a core module that imports nothing.
    expect(fs.readFileSync(path.join(root, "src/ports/trailingSlash.ts"), "utf8")).not.toMatch(/^\s*import\b/m)
  })

  it("the public views of staff and services leave out what their schemas leave out, listed once", () => {
    expect(filesMatching(sources("src"), /\{\s*(email|metadata):\s*_/)).toEqual([])
  })

  it("the widget asks for the hold lifetime the core grants a visitor, from a module it may bundle", () => {
    expect(fs.readFileSync(path.join(root, "widget/hold.ts"), "utf8")).toMatch(
      /import \{ VISITOR_HOLD_MAX_TTL_SECONDS \} from "\.\.\/src\/domain\/holdLifetime\.js"/
    )
    expect(filesMatching(sources("widget"), /SECONDS = 180\b/)).toEqual([])
    expect(fs.readFileSync(path.join(root, "src/domain/holdLifetime.ts"), "utf8")).not.toMatch(/^\s*import\b/m)
  })
})
