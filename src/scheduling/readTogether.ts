/**
 * How the schedule reads go to the storage: independent reads together, in one step or round
 * trip (`readMany`), or, where the storage reads in parallel and many rows are read, each on a
 * connection of its own.
 */
import { Effect } from "effect"
import type { StorageFailure } from "../domain/errors.js"
import { type CollectionRead, readManyOf, readOne, type ReadResults, type StorageService } from "../ports/storage.js"
import type { Tenant } from "../ports/tenant.js"

/**
 * Runs independent reads at once where the storage runs them in parallel (PostgreSQL
 * outside a transaction) and `worthIt`, else one after another; the successes in order.
 * Only reads of many rows gain: for one staff member's few rows, forking fibers (0.1–0.4 ms
 * here) and waking more connections can cost what the overlap saves.
 */
export const readTogether = (storage: StorageService) => {
  const concurrency = storage.readConcurrency ?? Effect.succeed(1)
  type Results<T extends ReadonlyArray<Effect.Effect<any, any, any>>> = { -readonly [K in keyof T]: Effect.Effect.Success<T[K]> }
  /** `next` of the successes, in the same step. */
  const andThen = <const T extends ReadonlyArray<Effect.Effect<any, any, any>>, B, E, R>(
    reads: T,
    worthIt: boolean,
    next: (results: Results<T>) => Effect.Effect<B, E, R>
  ): Effect.Effect<B, Effect.Effect.Error<T[number]> | E, Effect.Effect.Context<T[number]> | R> => {
    const all = reads as ReadonlyArray<Effect.Effect<unknown, unknown, unknown>>
    const then = next as (results: Array<unknown>) => Effect.Effect<B, E, R>
    return (worthIt
      ? Effect.flatMap(concurrency, (concurrency) => Effect.flatMap(Effect.all(all, { concurrency }), then))
      : inSequence(all, then)) as any
  }
  const together = <const T extends ReadonlyArray<Effect.Effect<any, any, any>>>(reads: T, worthIt: boolean): Effect.Effect<
    Results<T>,
    Effect.Effect.Error<T[number]>,
    Effect.Effect.Context<T[number]>
  > => andThen(reads, worthIt, Effect.succeed)
  return Object.assign(together, { andThen })
}

/**
 * `reads` one after another, then `next` of their successes in order: one step per read,
 * without what `Effect.all` sets up (batching and scope lookups, a loop, a mapped result).
 */
const inSequence = <B, E, R>(
  reads: ReadonlyArray<Effect.Effect<unknown, unknown, unknown>>,
  next: (results: Array<unknown>) => Effect.Effect<B, E, R>
): Effect.Effect<B, unknown, unknown> => {
  const from = (i: number, results: Array<unknown>): Effect.Effect<B, unknown, unknown> =>
    i === reads.length ? next(results) : Effect.flatMap(reads[i]!, (result) => {
      results.push(result)
      return from(i + 1, results)
    })
  // The list starts in the first step, so each run of the program has its own.
  return reads.length === 0 ? next([]) : Effect.flatMap(reads[0]!, (first) => from(1, [first]))
}

/**
 * `next` of what `reads` read, in order: together in one step or round trip of the storage
 * (`readMany`), or, where the storage reads in parallel here and now and it is `worthIt`
 * (many staff members' rows), each at once on a connection of its own.
 */
export const readsThen = (storage: StorageService) => {
  const together = readTogether(storage)
  const readMany = readManyOf(storage)
  // Spread over connections: each read a statement of its own, on a connection of its own.
  const one = readOne(storage)
  return <const T extends ReadonlyArray<CollectionRead<any>>, B, E, R>(
    reads: T,
    worthIt: boolean,
    next: (results: ReadResults<T>) => Effect.Effect<B, E, R>
  ): Effect.Effect<B, StorageFailure | E, Tenant | R> => {
    const inOne = Effect.flatMap(readMany(reads), next)
    if (!worthIt || storage.readConcurrency === undefined) return inOne
    return Effect.flatMap(storage.readConcurrency, (concurrency) =>
      concurrency > 1
        ? together.andThen(reads.map(one), true, next as (results: ReadonlyArray<unknown>) => Effect.Effect<B, E, R>)
        : inOne)
  }
}

/** `reads`, then the `alongside` ones: their results come last. */
export const withAlongside = <const T extends ReadonlyArray<CollectionRead<any>>, U extends ReadonlyArray<CollectionRead<any>>>(
  reads: T,
  alongside: U
) => (alongside.length === 0 ? reads : [...reads, ...alongside]) as unknown as readonly [...T, ...U]

/** No reads alongside. */
export const NO_READS: ReadonlyArray<never> = []
