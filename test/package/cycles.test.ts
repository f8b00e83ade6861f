/**
 * No module of the core, nor of the browser widget, imports itself back, through any chain of
 * relative imports, type-only ones and re-exports included: a cycle makes load order matter (a value read before its
 * module ran is `undefined`) and ties modules that should stand alone.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "vitest"
import { importGraph, root, sourcesUnder } from "./imports.js"

const src = path.join(root, "src")
const widget = path.join(root, "widget")

/**
 * The cycles a depth-first walk meets, each as its chain of files back to the first (one per
 * edge that closes a cycle, so every cycle's modules show up in one of them).
 */
const cyclesOf = (graph: ReadonlyMap<string, ReadonlyArray<string>>): Array<string> => {
  const done = new Set<string>()
  const onPath: Array<string> = []
  const found: Array<string> = []
  const visit = (file: string) => {
    onPath.push(file)
    for (const next of graph.get(file) ?? []) {
      const at = onPath.indexOf(next)
      if (at !== -1) found.push([...onPath.slice(at), next].join(" → "))
      else if (!done.has(next)) visit(next)
    }
    onPath.pop()
    done.add(file)
  }
  for (const file of graph.keys()) if (!done.has(file)) visit(file)
  return found
}

describe("the core's and the widget's imports", () => {
  it("finds a cycle in an import graph, as its chain of files", () => {
    const graph = new Map([["a.ts", ["b.ts"]], ["b.ts", ["c.ts"]], ["c.ts", ["a.ts"]], ["d.ts", ["a.ts"]]])
    expect(cyclesOf(graph)).toEqual(["a.ts → b.ts → c.ts → a.ts"])
    expect(cyclesOf(new Map([["a.ts", ["b.ts"]], ["b.ts", []]]))).toEqual([])
  })

  it("reads type-only imports, re-exports and folders' index files as imports", () => {
    const sources = new Map([
      ["src/a.ts", `import type { B } from "./b.js"\nimport { Effect } from "effect"\nexport * from "./c/index.js"`],
      ["src/b.ts", `export { d } from "./c/d.js"\nconst a = () => import("./a.js")`],
      ["src/c/index.ts", `import { b } from "../b.js"`],
      ["src/c/d.ts", ""]
    ])
    const graph = importGraph([...sources.keys()], (file) => sources.get(file)!)
    expect(graph).toEqual(
      new Map([
        ["src/a.ts", ["src/b.ts", "src/c/index.ts"]],
        ["src/b.ts", ["src/a.ts", "src/c/d.ts"]],
        ["src/c/index.ts", ["src/b.ts"]],
        ["src/c/d.ts", []]
      ])
    )
    // a → c/index → b → a goes through b, whose cycle is already reported.
    expect(cyclesOf(graph)).toEqual(["src/a.ts → src/b.ts → src/a.ts"])
  })

  it("form no cycle in src/", () => {
    const files = sourcesUnder(src)
    const graph = importGraph(files, (file) => fs.readFileSync(path.join(root, file), "utf8"))
    // The walk sees the core's real imports.
    expect(graph.get("src/scheduling/slots.ts")).toContain("src/scheduling/types.ts")
    expect(cyclesOf(graph)).toEqual([])
  })

  it("form no cycle in widget/", () => {
    const files = sourcesUnder(widget)
    const graph = importGraph(files, (file) => fs.readFileSync(path.join(root, file), "utf8"))
    // The walk sees the widget's real imports: the entry point mounts the widget.
    expect(graph.get("widget/index.ts")).toContain("widget/widget.ts")
    expect(cyclesOf(graph)).toEqual([])
  })
})
