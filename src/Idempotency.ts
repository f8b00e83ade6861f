/**
 * Idempotent requests (docs/api.md §1): the first request with an `Idempotency-Key` runs and its
 * response is kept for 24 h; a repeat with the same key and the same request replays it; the
 * same key with another request is `idempotency_mismatch`; a repeat while the first is still
 * running is `idempotency_conflict`. Records live in the storage port under the caller's
 * tenant (so keys are scoped to account and environment, and hold across processes that
 * share a database); claiming a key is one atomic storage transaction.
 */
import { Effect, Option } from "effect"
import { IdempotencyCollection, type IdempotencyRecord, type StoredResponse } from "./auth/collections.js"
import { sha256Hex } from "./auth/crypto.js"
import { BadRequest, IdempotencyConflict, IdempotencyMismatch } from "./domain/errors.js"
import { currentStamp } from "./internal/resources.js"
import { keyedTransactionOf, lockKeysOf, Storage } from "./ports/storage.js"

export type { StoredResponse }

export const IDEMPOTENCY_TTL_MS = 24 * 3_600_000
/** A request still "in flight" after this long is presumed lost (its process died): the key frees up. */
export const IN_FLIGHT_LOCK_MS = 60_000
export const MAX_IDEMPOTENCY_KEY_LENGTH = 255

export type Claim =
  | { readonly _tag: "Started" }
  | { readonly _tag: "Replay"; readonly response: StoredResponse }

/** JSON with object keys sorted, so two encodings of one body fingerprint alike. */
export const canonicalJson = (value: unknown): string => {
  if (value === null || typeof value !== "object") return JSON.stringify(value) ?? "null"
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`
  const entries = Object.keys(value).sort().map((k) => `${JSON.stringify(k)}:${canonicalJson((value as any)[k])}`)
  return `{${entries.join(",")}}`
}

/**
 * The key of an `Idempotency-Key` header: an RFC 8941 string (`"abc"`) or the bare value,
 * 1–255 printable ASCII characters.
 */
export const parseIdempotencyKey = (header: string): Effect.Effect<string, BadRequest> => {
  const trimmed = header.trim()
  const quoted = /^"((?:[\x20\x21\x23-\x5B\x5D-\x7E]|\\["\\])*)"$/.exec(trimmed)
  const key = quoted !== null ? quoted[1]!.replace(/\\(["\\])/g, "$1") : trimmed
  if (key.length === 0 || key.length > MAX_IDEMPOTENCY_KEY_LENGTH || !/^[\x20-\x7E]+$/.test(key)) {
    const message = `must be 1 to ${MAX_IDEMPOTENCY_KEY_LENGTH} printable ASCII characters, bare or as a quoted string`
    return Effect.fail(
      new BadRequest({ detail: `Idempotency-Key ${message}`, errors: [{ path: "Idempotency-Key", message }] })
    )
  }
  return Effect.succeed(key)
}

export class Idempotency extends Effect.Service<Idempotency>()("slotwise/Idempotency", {
  effect: Effect.gen(function*() {
    const storage = yield* Storage
    const records = storage.collection(IdempotencyCollection)
    const keyedWrite = keyedTransactionOf(storage)
    const lockKeys = lockKeysOf(storage)
    /** `effect` as one write that excludes only the writes of the same key's record. */
    const forKey = <A, E, R>(id: string, effect: Effect.Effect<A, E, R>) =>
      keyedWrite(Effect.zipRight(lockKeys([`idempotency/${id}`]), effect))

    /** What makes two requests "the same": method, path and the body's canonical JSON. */
    const fingerprint = (method: string, path: string, body: unknown) =>
      sha256Hex(`${method.toUpperCase()} ${path}\n${canonicalJson(body ?? null)}`)

    /** Claims `key` for a request, or says what to replay, or why not. */
    const begin = (key: string, requestFingerprint: string) =>
      Effect.gen(function*() {
        const id = yield* sha256Hex(key)
        return yield* forKey(id, Effect.gen(function*() {
          const now = yield* currentStamp
          const found = Option.getOrUndefined(yield* records.get(id))
          const live = found !== undefined && found.expires_ms > now.ms
          if (live && found.fingerprint !== requestFingerprint) {
            return yield* new IdempotencyMismatch({
              detail: "this Idempotency-Key was used with another request; use a new key for a new request"
            })
          }
          if (live && found.state === "completed" && found.response !== null) {
            return { _tag: "Replay", response: found.response } satisfies Claim as Claim
          }
          if (live && found.state === "in_flight" && found.locked_until_ms > now.ms) {
            return yield* new IdempotencyConflict({
              detail: "a request with this Idempotency-Key is still being processed; retry later"
            })
          }
          const record: IdempotencyRecord = {
            id,
            fingerprint: requestFingerprint,
            state: "in_flight",
            response: null,
            locked_until_ms: now.ms + IN_FLIGHT_LOCK_MS,
            expires_ms: now.ms + IDEMPOTENCY_TTL_MS,
            created_at: now.iso
          }
          if (found === undefined) yield* records.insert(record)
          else yield* records.update(record)
          return { _tag: "Started" } satisfies Claim as Claim
        }))
      })

    /** Keeps the response of the request that claimed `key`, for replays. */
    const complete = (key: string, response: StoredResponse) =>
      Effect.gen(function*() {
        const id = yield* sha256Hex(key)
        yield* forKey(id, Effect.gen(function*() {
          const found = Option.getOrUndefined(yield* records.get(id))
          if (found === undefined) return
          yield* records.update({ ...found, state: "completed", response })
        }))
      })

    /** Frees `key` without keeping a response (the request failed in a way worth retrying). */
    const release = (key: string) =>
      Effect.gen(function*() {
        const id = yield* sha256Hex(key)
        yield* forKey(id, records.remove(id))
      })

    return { fingerprint, begin, complete, release } as const
  })
}) {}
