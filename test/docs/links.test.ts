/**
 * The README is the front door and the docs/ pages carry the depth: every relative link in
 * them points at a file that exists (and an anchor at a heading that exists), and the README
 * stays short enough to read first.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..")
const pages = ["README.md", ...fs.readdirSync(path.join(root, "docs")).filter((f) => f.endsWith(".md")).map((f) => `docs/${f}`)]

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens. */
const anchorOf = (heading: string) => heading.trim().toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, "").replace(/\s/g, "-")

const withoutCode = (text: string) => text.replace(/```[\s\S]*?```/g, "").replace(/`[^`\n]*`/g, "")

describe("documentation links", () => {
  it.each(pages)("every relative link in %s resolves", (page) => {
    const text = withoutCode(fs.readFileSync(path.join(root, page), "utf8"))
    const broken: Array<string> = []
    for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
      if (/^[a-z]+:/i.test(target!)) continue
      const [file, anchor] = target!.split("#")
      const resolved = file === "" ? path.join(root, page) : path.resolve(path.dirname(path.join(root, page)), file!)
      if (!fs.existsSync(resolved)) {
        broken.push(target!)
        continue
      }
      if (anchor !== undefined && resolved.endsWith(".md")) {
        const headings = [...fs.readFileSync(resolved, "utf8").matchAll(/^#+\s+(.*)$/gm)].map((m) => anchorOf(m[1]!))
        if (!headings.includes(anchor)) broken.push(target!)
      }
    }
    expect(broken).toEqual([])
  })

  it("the README stays a front door", () => {
    const lines = fs.readFileSync(path.join(root, "README.md"), "utf8").split("\n").length
    expect(lines).toBeLessThanOrEqual(200)
  })
})
