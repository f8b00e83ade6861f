/**
 * Idempotent requests (docs/api.md §1): the first request with an `Idempotency-Key` runs and its
 * response is kept for 24 h; a repeat with the same key and the same request replays it; the
 * same key with another request is `idempotency_mismatch`; a repeat while the first is still
 * running is `idempotency_conflict`. Records live in the storage port under the caller's
 * tenant (so keys are scoped to account and environment, and hold across processes that
 * share a database); claiming a key is one atomic storage transaction.
 */
import { Effect, Option } from "effect"
import { type CommittedResult, IdempotencyCollection, type IdempotencyRecord, type StoredResponse } from "../auth/collections.js"
import { sha256Hex } from "../auth/crypto.js"
import { BadRequest, IdempotencyConflict, IdempotencyMismatch, IdempotencySecretWithheld } from "../domain/errors.js"
import { currentStamp } from "../internal/resources.js"
import { currentIdempotentWrites, type IdempotentWrites, keyedTransactionOf, lockKeysOf, Storage } from "../ports/storage.js"
import { Tenant } from "../ports/tenant.js"

export type { StoredResponse }

export const IDEMPOTENCY_TTL_MS = 24 * 3_600_000
/** A request still "in flight" after this long is presumed lost (its process died): the key frees up. */
export const IN_FLIGHT_LOCK_MS = 60_000
export const MAX_IDEMPOTENCY_KEY_LENGTH = 255

export type Claim =
  /** The request runs; `results` are what an earlier attempt's write transactions committed. */
  | { readonly _tag: "Started"; readonly results: ReadonlyArray<CommittedResult> }
  | { readonly _tag: "Replay"; readonly response: StoredResponse }

/** Whether `value` is plain JSON (objects, arrays, strings, finite numbers, booleans, null; undefined fields). */
const isPlainJson = (value: unknown): boolean => {
  if (value === null || typeof value === "string" || typeof value === "boolean") return true
  if (typeof value === "number") return Number.isFinite(value)
  if (typeof value !== "object") return false
  if (Array.isArray(value)) return value.every(isPlainJson)
  const prototype = Object.getPrototypeOf(value)
  if (prototype !== Object.prototype && prototype !== null) return false
  return Object.values(value).every((field) => field === undefined || isPlainJson(field))
}

const createdBy = (value: Record<string, unknown>) => ({
  object: typeof value.object === "string" ? value.object : null,
  id: typeof value.id === "string" ? value.id : null
})

/** What a committed write transaction keeps of its result: a secret is never kept. */
const committedResult = (value: unknown): CommittedResult => {
  if (value === undefined) return { kept: "value" }
  if (Option.isOption(value)) return { kept: "option", some: Option.isSome(value) ? committedResult(value.value) : null }
  if (!isPlainJson(value)) return { kept: "nothing" }
  if (typeof value === "object" && value !== null && typeof (value as Record<string, unknown>).secret === "string") {
    return { kept: "secret_withheld", ...createdBy(value as Record<string, unknown>) }
  }
  return { kept: "value", value: JSON.parse(JSON.stringify(value)) }
}

/** The repeat of a request whose response carried a secret: told so, never given the secret. */
export const secretWithheld = (created: { readonly object: string | null; readonly id: string | null }) => {
  const what = created.id !== null ? `${created.object ?? "resource"} ${created.id}` : "the resource"
  return new IdempotencySecretWithheld({
    detail: `the first request with this Idempotency-Key succeeded and created ${what}; its secret was ` +
      "shown once in that response and is not kept for replays: rotate it if it was lost"
  })
}

/** What a retry's transaction answers in place of writing again. */
const replayOf = (result: CommittedResult): Effect.Effect<unknown, IdempotencySecretWithheld | IdempotencyConflict> =>
  result.kept === "value"
    ? Effect.succeed(result.value)
    : result.kept === "option"
    ? result.some === null ? Effect.succeed(Option.none()) : Effect.map(replayOf(result.some), Option.some)
    : result.kept === "secret_withheld"
    ? Effect.fail(secretWithheld(result))
    : Effect.fail(
      new IdempotencyConflict({
        detail: "the first request with this Idempotency-Key made its change, but its answer was lost and cannot " +
          "be rebuilt; read the resource to see it"
      })
    )

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
        return yield* forKey(
          id,
          Effect.gen(function*() {
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
            // An earlier attempt's committed writes stay: this one is given their results.
            const results = live ? found.results ?? [] : []
            const record: IdempotencyRecord = {
              id,
              fingerprint: requestFingerprint,
              state: "in_flight",
              response: null,
              ...(results.length > 0 ? { results } : {}),
              locked_until_ms: now.ms + IN_FLIGHT_LOCK_MS,
              expires_ms: now.ms + IDEMPOTENCY_TTL_MS,
              created_at: now.iso
            }
            if (found === undefined) yield* records.insert(record)
            else yield* records.update(record)
            return { _tag: "Started", results } satisfies Claim as Claim
          })
        )
      })

    /** Changes the record of `key`, if there is one, as one write excluding the key's others. */
    const updateRecord = (id: string, change: (found: IdempotencyRecord) => IdempotencyRecord | undefined) =>
      forKey(
        id,
        Effect.gen(function*() {
          const found = Option.getOrUndefined(yield* records.get(id))
          if (found === undefined) return
          const changed = change(found)
          yield* changed === undefined ? records.remove(id) : records.update(changed)
        })
      )

    /**
     * Runs the request that claimed `key` (`Started`): each write transaction that commits in it
     * keeps its result in the key's record in that same transaction, and those an earlier
     * attempt committed (`results`) are given their results instead of running again. So a
     * request whose outcome was unknown (it answered 503 after its COMMIT, its process died)
     * is retried without writing twice.
     */
    const running = <A, E, R>(key: string, results: ReadonlyArray<CommittedResult>, run: Effect.Effect<A, E, R>) =>
      Effect.gen(function*() {
        const id = yield* sha256Hex(key)
        const tenant = yield* Tenant
        let next = 0
        let open = true
        const writes: IdempotentWrites = {
          replay: () => (open && next < results.length ? Option.some(replayOf(results[next++]!)) : Option.none()),
          committing: (result) =>
            open
              ? Effect.provideService(
                updateRecord(id, (found) => ({ ...found, results: [...(found.results ?? []), committedResult(result)] })),
                Tenant,
                tenant
              )
              : Effect.void
        }
        return yield* Effect.ensuring(
          Effect.locally(run, currentIdempotentWrites, writes),
          Effect.sync(() => {
            open = false
          })
        )
      })

    /** Keeps the response of the request that claimed `key`, for replays. */
    const complete = (key: string, response: StoredResponse) =>
      Effect.flatMap(
        sha256Hex(key),
        (id) => updateRecord(id, ({ results: _done, ...found }) => ({ ...found, state: "completed", response }))
      )

    /**
     * Frees `key` without keeping a response (the request failed in a way worth retrying). If
     * some of its writes committed, the record stays with their results, unlocked: a retry is
     * given them.
     */
    const release = (key: string) =>
      Effect.flatMap(
        sha256Hex(key),
        (id) => updateRecord(id, (found) => (found.results ?? []).length > 0 ? { ...found, locked_until_ms: 0 } : undefined)
      )

    return { fingerprint, begin, running, complete, release } as const
  })
}) {}
