/** Combinators for the chains every write runs, where each Effect operation is paid per request. */
import { Effect } from "effect"

/**
 * `first`, then `next`; just `next` when `first` is `Effect.void`: a step with nothing to do
 * here (no key locks on this storage, no member rows to keep, no jobs to remove) then costs
 * no operations at all.
 */
export const thenDo = <A, E1, R1, E2, R2>(
  first: Effect.Effect<void, E1, R1>,
  next: Effect.Effect<A, E2, R2>
): Effect.Effect<A, E1 | E2, R1 | R2> => first === Effect.void ? next : Effect.zipRight(first, next)
