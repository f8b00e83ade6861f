/**
 * The route table, read from the HttpApi itself: for a method and path, the endpoint's
 * access rule, or which methods the path does allow (405), or nothing (404). The pipeline
 * needs this before the router runs, to answer 404/405 as problems, to authenticate and
 * rate-limit every request the same way, and to check scopes before a body is read.
 */
import { HttpApi } from "@effect/platform"
import { Context } from "effect"
import { Access, type AccessRule, publicAccess } from "../contract/access.js"

interface Route {
  readonly method: string
  readonly segments: ReadonlyArray<string>
  readonly statics: number
  readonly access: AccessRule
}

export type RouteMatch =
  | { readonly _tag: "Found"; readonly access: AccessRule }
  | { readonly _tag: "MethodNotAllowed"; readonly allow: ReadonlyArray<string> }
  | { readonly _tag: "NotFound" }

const split = (path: string): Array<string> => path.split("/").slice(1)

export interface RouteTable {
  readonly match: (method: string, path: string) => RouteMatch
}

export const makeRouteTable = (
  api: HttpApi.HttpApi.Any,
  extra: ReadonlyArray<{ readonly method: string; readonly path: string; readonly access: AccessRule }> = []
): RouteTable => {
  const routes: Array<Route> = []
  const add = (method: string, path: string, access: AccessRule) => {
    const segments = split(path)
    routes.push({ method, segments, statics: segments.filter((s) => !s.startsWith(":")).length, access })
  }
  HttpApi.reflect(api as any, {
    onGroup: () => {},
    onEndpoint: ({ endpoint, mergedAnnotations }) => {
      add(endpoint.method, endpoint.path, Context.getOrElse(mergedAnnotations, Access, () => publicAccess))
    }
  })
  for (const route of extra) add(route.method, route.path, route.access)

  const bySize = new Map<number, Array<Route>>()
  for (const route of routes) {
    const list = bySize.get(route.segments.length) ?? []
    list.push(route)
    bySize.set(route.segments.length, list)
  }

  const matches = (route: Route, segments: ReadonlyArray<string>) => {
    for (let i = 0; i < segments.length; i++) {
      const expected = route.segments[i]!
      if (expected.startsWith(":") ? segments[i] === "" : expected !== segments[i]) return false
    }
    return true
  }

  return {
    match: (method, path) => {
      const segments = split(path)
      const candidates = (bySize.get(segments.length) ?? []).filter((route) => matches(route, segments))
      if (candidates.length === 0) return { _tag: "NotFound" }
      const wanted = method === "HEAD" ? "GET" : method
      let best: Route | undefined
      for (const route of candidates) {
        if (route.method === wanted && (best === undefined || route.statics > best.statics)) best = route
      }
      if (best !== undefined) return { _tag: "Found", access: best.access }
      const allow = new Set(candidates.map((r) => r.method))
      if (allow.has("GET")) allow.add("HEAD")
      return { _tag: "MethodNotAllowed", allow: [...allow].sort() }
    }
  }
}
