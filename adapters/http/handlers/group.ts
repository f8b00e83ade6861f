/**
 * A group of handlers built as `HttpApiBuilder.group` builds one, but with the platform
 * keeping only the group's security middleware as the group's own context. The platform
 * merges a group's context into every request it serves (and each provide after that copies
 * the merged whole): built in the server's context, that is every service of the server on
 * each request. The services are taken when the handlers are made, so the handlers use
 * nothing of that context; the type below holds them to it (no requirement left to a request).
 */
import { type HttpApi, HttpApiBuilder, type HttpApiGroup } from "@effect/platform"
import { Context, Effect, Layer, type Scope } from "effect"
import { encodedHandlers } from "./encoded.js"

export const handlerGroup = <
  ApiId extends string,
  Groups extends HttpApiGroup.HttpApiGroup.Any,
  ApiError,
  ApiR,
  const Name extends HttpApiGroup.HttpApiGroup.Name<Groups>,
  E,
  Provides,
  EX = never,
  RX = never
>(
  api: HttpApi.HttpApi<ApiId, Groups, ApiError, ApiR>,
  groupName: Name,
  build: (
    handlers: HttpApiBuilder.Handlers.FromGroup<ApiError, ApiR, HttpApiGroup.HttpApiGroup.WithName<Groups, Name>>
  ) => HttpApiBuilder.Handlers<E, Provides, never> | Effect.Effect<HttpApiBuilder.Handlers<E, Provides, never>, EX, RX>
): Layer.Layer<
  HttpApiGroup.ApiGroup<ApiId, Name>,
  EX,
  Exclude<RX, Scope.Scope> | HttpApiGroup.HttpApiGroup.MiddlewareWithName<Groups, Name>
> =>
  Layer.scopedDiscard(Effect.gen(function*() {
    const services = yield* Effect.context<never>()
    const group = (api.groups as unknown as Record<string, HttpApiGroup.HttpApiGroup.AnyWithProps>)[groupName]!
    const middleware = [group.middlewares, ...Object.values(group.endpoints).map((endpoint) => endpoint.middlewares)]
      .flatMap((set) => [...set])
    const built: Layer.Layer<never, EX> = HttpApiBuilder.group(api, groupName, (handlers) => {
      const made = build(handlers)
      const encoded = <H extends HttpApiBuilder.Handlers.Any>(h: H) => encodedHandlers(handlers, h)
      // The handlers are made with every service at hand; only the group is built without them.
      return (Effect.isEffect(made) ? Effect.map(Effect.provide(made, services), encoded) : encoded(made)) as never
    }) as never
    const groupContext = Context.pick(...middleware)(services as Context.Context<unknown>) as Context.Context<never>
    // The router the group adds its routes to is the app's: the layers' memo map builds it once.
    const memoMap = yield* Layer.CurrentMemoMap
    yield* Effect.mapInputContext(Layer.buildWithMemoMap(built, memoMap, yield* Effect.scope), () => groupContext)
  })) as never
