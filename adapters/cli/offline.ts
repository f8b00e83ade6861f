/**
 * Commands that work on the database directly (`accounts …`, `keys …`), with or without a
 * server running: a use case run on the storage the flags name, its failure printed in words.
 */
import { Cause, type Effect, type Layer, ManagedRuntime } from "effect"
import type { Accounts } from "../../src/accounts/Accounts.js"
import type { ApiKeys } from "../../src/keys/ApiKeys.js"
import { isSlotwiseFailure, toProblem } from "../../src/domain/errors.js"
import type { StorageFlag } from "./storage.js"

/** The services the offline commands use, on a storage (from the composition root). */
export type OfflineLayer = (storage: StorageFlag) => Layer.Layer<Accounts | ApiKeys, unknown>

export const out = (text: string) => process.stdout.write(`${text}\n`)

/** Prints a command's help; its exit code. */
export const printHelp = (text: string): number => {
  process.stdout.write(text)
  return 0
}

/** Runs `use` on `layer`; prints its failure (naming the storage) and returns the exit code. */
export const runOffline = async <S, A>(
  layer: Layer.Layer<S, unknown>,
  storageName: string,
  use: Effect.Effect<A, unknown, S>,
  print: (value: A) => void
): Promise<number> => {
  const runtime = ManagedRuntime.make(layer)
  try {
    const exit = await runtime.runPromiseExit(use)
    if (exit._tag === "Success") {
      print(exit.value)
      return 0
    }
    const error = Cause.squash(exit.cause)
    // An operator at the console sees a storage fault's own words (they name no secret).
    const detail = isSlotwiseFailure(error) ? error.detail : String((error as any)?.cause ?? error)
    process.stderr.write(`slotwise: ${detail} (${storageName})\n`)
    for (const e of isSlotwiseFailure(error) ? toProblem(error).errors ?? [] : []) process.stderr.write(`  ${e.path}: ${e.message}\n`)
    return 1
  } finally {
    await runtime.dispose()
  }
}
