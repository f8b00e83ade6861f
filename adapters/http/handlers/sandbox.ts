import { Effect } from "effect"
import { Sandbox } from "../../../src/sandbox/Sandbox.js"
import { SlotwiseApi } from "../api.js"
import { handlerGroup } from "./group.js"
import { asTenant } from "./security.js"

const write = { uninterruptible: true } as const

export const SandboxLive = handlerGroup(SlotwiseApi, "sandbox", (handlers) =>
  Effect.gen(function*() {
    const sandbox = yield* Sandbox
    return handlers
      .handle("emit", ({ payload }) => asTenant(sandbox.emit(payload)), write)
      .handle("reset", () => asTenant(sandbox.reset()), write)
  }))
