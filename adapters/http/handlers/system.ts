import { HttpServerResponse } from "@effect/platform"
import { Effect } from "effect"
import { Storage } from "../../../src/ports/storage.js"
import { SlotwiseApi, VERSION } from "../api.js"
import { handlerGroup } from "./group.js"

export const SystemLive = handlerGroup(SlotwiseApi, "system", (handlers) =>
  Effect.gen(function*() {
    const storage = yield* Storage
    return handlers.handleRaw("health", () =>
      storage.events.lastSeq.pipe(
        Effect.timeout("2 seconds"),
        Effect.match({
          onSuccess: () => HttpServerResponse.unsafeJson({ status: "ok", storage: "ok", version: VERSION }),
          onFailure: () => HttpServerResponse.unsafeJson({ status: "degraded", storage: "unavailable", version: VERSION }, { status: 503 })
        })
      ))
  }))
