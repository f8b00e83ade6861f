/**
 * The route table, read from the HttpApi itself: for a method and path, the endpoint's
 * access rule, or which methods the path does allow (405), or nothing (404). The pipeline
 * needs this before the router runs, to answer 404/405 as problems, to authenticate and
 * rate-limit every request the same way, and to check scopes before a body is read.
 */
import type { HttpApi } from "@effect/platform"
import { type AccessRule, endpointAccess } from "../contract/access.js"
import { type BodyDecoder, bodyDecoderOf } from "../contract/decodedBodies.js"

interface Route {
  readonly method: string
  readonly segments: ReadonlyArray<string>
  /** Per segment: whether it is a parameter (`:id`), worked out once. */
  readonly params: ReadonlyArray<boolean>
  readonly statics: number
  readonly access: AccessRule
  readonly payload: BodyDecoder | undefined
}

export type RouteMatch =
  | {
    readonly _tag: "Found"
    readonly access: AccessRule
    /** The endpoint's body decoder, when its payload is decoded with the core's rules. */
    readonly payload: BodyDecoder | undefined
  }
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
  const add = (method: string, path: string, access: AccessRule, payload?: BodyDecoder) => {
    const segments = split(path)
    const params = segments.map((s) => s.startsWith(":"))
    routes.push({ method, segments, params, statics: params.filter((p) => !p).length, access, payload })
  }
  for (const route of endpointAccess(api)) {
    add(route.method, route.path, route.access, route.payload === undefined ? undefined : bodyDecoderOf(route.payload))
  }
  for (const route of extra) add(route.method, route.path, route.access)

  const bySize = new Map<number, Array<Route>>()
  for (const route of routes) {
    const list = bySize.get(route.segments.length) ?? []
    list.push(route)
    bySize.set(route.segments.length, list)
  }

  const matches = (route: Route, segments: ReadonlyArray<string>) => {
    for (let i = 0; i < segments.length; i++) {
      if (route.params[i] ? segments[i] === "" : route.segments[i] !== segments[i]) return false
    }
    return true
  }
  const NOT_FOUND: RouteMatch = { _tag: "NotFound" }
  // One answer object per route, made once: this runs on every request.
  const found = new Map(routes.map((route) => [route, { _tag: "Found", access: route.access, payload: route.payload } as const]))

  return {
    match: (method, path) => {
      const segments = split(path)
      const sized = bySize.get(segments.length)
      if (sized === undefined) return NOT_FOUND
      const wanted = method === "HEAD" ? "GET" : method
      let best: Route | undefined
      let any = false
      for (const route of sized) {
        if (!matches(route, segments)) continue
        any = true
        if (route.method === wanted && (best === undefined || route.statics > best.statics)) best = route
      }
      if (best !== undefined) return found.get(best)!
      if (!any) return NOT_FOUND
      const candidates = sized.filter((route) => matches(route, segments))
      const allow = new Set(candidates.map((r) => r.method))
      if (allow.has("GET")) allow.add("HEAD")
      return { _tag: "MethodNotAllowed", allow: [...allow].sort() }
    }
  }
}
