/**
 * compose.yaml, as far as it can be checked without Docker: it parses; the host port leaves
 * `npm start`'s 8080 free; the OAuth issuer is that public address; the header names the
 * Compose version its features need; the image is built in two stages and the runtime stage
 * carries no dev dependencies and starts node itself (signals reach the server).
 */
import * as fs from "node:fs"
import { createRequire } from "node:module"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..")
const text = fs.readFileSync(path.join(root, "compose.yaml"), "utf8")
// js-yaml comes with the OpenAPI linter (a dev dependency) and has no types of its own here.
const yaml = createRequire(import.meta.url)("js-yaml") as { load: (text: string) => any }

describe("compose.yaml", () => {
  const compose = yaml.load(text)
  const instance = compose.services["slotwise-1"]

  it("publishes a port other than npm start's 8080, and makes it the OAuth issuer", () => {
    const published: Array<string> = compose.services.nginx.ports
    const hostPorts = published.map((p) => Number(p.split(":").at(-2)))
    expect(hostPorts).not.toContain(8080)
    const issuer = new URL(instance.environment.SLOTWISE_PUBLIC_URL)
    expect(hostPorts).toContain(Number(issuer.port))
    expect(instance.environment).toMatchObject({ SLOTWISE_HOST: "0.0.0.0", SLOTWISE_TRUST_PROXY: "true" })
  })

  it("states the Compose version its inline Dockerfile and inline config need", () => {
    expect(text).toContain("build.dockerfile_inline")
    expect(compose.configs.nginx.content).toBeDefined()
    expect(text.split("\n").slice(0, 5).join("\n")).toMatch(/Compose 2\.23\.1 or later/)
  })

  it("builds in two stages: the runtime stage has no dev dependencies and runs node directly", () => {
    const stages = (instance.build.dockerfile_inline as string).split(/^FROM /m).slice(1)
    expect(stages).toHaveLength(2)
    const [build, runtime] = stages as [string, string]
    expect(build).toMatch(/npm ci\b/)
    expect(build).toMatch(/npm prune --omit=dev/)
    expect(runtime).toMatch(/COPY --from=build \/app\/node_modules node_modules/)
    expect(runtime).not.toMatch(/npm (ci|install)(?![^\n]*--omit=dev)/)
    expect(runtime).not.toMatch(/COPY (src|adapters)\b/)
    expect(runtime).toMatch(/CMD \["node", .*"bin\/slotwise\.js", "serve"\]/)
  })
})
