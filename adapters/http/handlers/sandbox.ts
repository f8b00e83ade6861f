import { Effect } from "effect"
import { Sandbox } from "../../../src/sandbox/Sandbox.js"
import { SlotwiseApi } from "../api.js"
import { handlerGroup } from "./group.js"

const write = { uninterruptible: true } as const

export const SandboxLive = handlerGroup(SlotwiseApi, "sandbox", (handlers) =>
  Effect.gen(function*() {
    const sandbox = yield* Sandbox
    return handlers
      .handle("emit", ({ payload }) => sandbox.emit(payload), write)
      .handle("reset", () => sandbox.reset(), write)
  }))
