/**
 * Interleaved timing shared by the benchmarks. These 2-core machines drift by 2× within a
 * minute, so contestants are timed once per round, the order turning each round, and
 * compared by medians over rounds: a drift then touches every contestant alike.
 */
import { performance } from "node:perf_hooks"

export const median = (xs: ReadonlyArray<number>): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!

/**
 * Each contestant's times in ms, one per round. `pauseMs` between turns lets one
 * contestant's background work (a checkpoint thread) end before the next is timed.
 */
export const interleaved = async (
  contestants: ReadonlyArray<() => unknown>,
  rounds: number,
  pauseMs = 0
): Promise<Array<Array<number>>> => {
  const times = contestants.map((): Array<number> => [])
  for (let round = 0; round < rounds; round++) {
    for (let k = 0; k < contestants.length; k++) {
      const i = (round + k) % contestants.length
      const t0 = performance.now()
      await contestants[i]!()
      times[i]!.push(performance.now() - t0)
      if (pauseMs > 0) await new Promise((resolve) => setTimeout(resolve, pauseMs))
    }
  }
  return times
}
