/**
 * The writer connection's lock (adapters/sqlite/lock.ts): one holder at a time, released
 * however the holder ends, and never left held by a waiter that was interrupted.
 */
import { describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, Exit, Fiber } from "effect"
import { makeLock } from "../../adapters/sqlite/lock.js"

describe("sqlite writer lock", () => {
  it.live("admits one holder at a time among 30 fibers that yield while holding it", () =>
    Effect.gen(function*() {
      const lock = makeLock()
      let inside = 0
      let most = 0
      let done = 0
      const worker = lock.withLock(Effect.gen(function*() {
        inside++
        most = Math.max(most, inside)
        yield* Effect.yieldNow()
        yield* Effect.sleep("1 millis")
        inside--
        done++
      }))
      yield* Effect.all(Array.from({ length: 30 }, () => worker), { concurrency: "unbounded" })
      expect(done).toBe(30)
      expect(most).toBe(1)
      expect(lock.isHeld()).toBe(false)
    }))

  it.live("is released when the holder fails, dies or is interrupted", () =>
    Effect.gen(function*() {
      const lock = makeLock()
      expect(yield* Effect.exit(lock.withLock(Effect.fail("no")))).toEqual(Exit.fail("no"))
      expect(lock.isHeld()).toBe(false)
      yield* Effect.exit(lock.withLock(Effect.die("bug")))
      expect(lock.isHeld()).toBe(false)
      const holding = yield* Deferred.make<void>()
      const holder = yield* Effect.fork(lock.withLock(Effect.zipRight(Deferred.succeed(holding, undefined), Effect.never)))
      yield* Deferred.await(holding)
      expect(lock.isHeld()).toBe(true)
      yield* Fiber.interrupt(holder)
      expect(lock.isHeld()).toBe(false)
    }))

  it.live("a waiter interrupted while the lock is released to it does not keep it", () =>
    Effect.gen(function*() {
      const lock = makeLock()
      yield* Effect.uninterruptibleMask(lock.acquire)
      const waiter = yield* Effect.fork(lock.withLock(Effect.void))
      yield* Effect.yieldNow() // the waiter is now queued
      // Interruption and release in one synchronous step: the interrupt reaches the waiter
      // before its wake-up does.
      yield* Effect.sync(() => {
        Effect.runFork(Fiber.interrupt(waiter))
        lock.release()
      })
      yield* Fiber.await(waiter)
      expect(lock.isHeld()).toBe(false)
      // Anyone can take it at once. A leaked lock would wait forever: the bound only names
      // that failure, and is far beyond any pause of a busy machine.
      yield* lock.withLock(Effect.void).pipe(Effect.timeoutFail({ duration: "10 seconds", onTimeout: () => "lock leaked" }))
    }))

  it.live("waiters all get their turn when a woken waiter is interrupted", () =>
    Effect.gen(function*() {
      const lock = makeLock()
      yield* Effect.uninterruptibleMask(lock.acquire)
      const order: Array<number> = []
      const waiters = yield* Effect.forEach([1, 2, 3], (n) => Effect.fork(lock.withLock(Effect.sync(() => order.push(n)))))
      yield* Effect.yieldNow()
      yield* Fiber.interrupt(waiters[0]!)
      lock.release()
      yield* Fiber.joinAll(waiters.slice(1))
      expect(order.sort()).toEqual([2, 3])
      expect(lock.isHeld()).toBe(false)
    }))
})
