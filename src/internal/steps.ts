/** Combinators for the chains every write runs, where each Effect operation is paid per request. */
import { Effect } from "effect"

/**
 * `first`, then `next`; just one of them when the other is `Effect.void`: a step with nothing
 * to do here (no key locks on this storage, no member rows to keep, no jobs to remove) then
 * costs no operations at all.
 */
export const thenDo = <A, E1, R1, E2, R2>(
  first: Effect.Effect<void, E1, R1>,
  next: Effect.Effect<A, E2, R2>
): Effect.Effect<A, E1 | E2, R1 | R2> =>
  first === Effect.void
    ? next
    : (next as Effect.Effect<unknown, E2, R2>) === Effect.void
    ? first as Effect.Effect<unknown, E1, R1> as Effect.Effect<A, E1, R1>
    : Effect.zipRight(first, next)
