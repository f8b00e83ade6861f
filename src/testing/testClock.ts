/**
 * The sandbox's time: Effect's own `TestClock`, started at a chosen instant instead of 1970
 * and installed as the default `Clock`. It stands still until adjusted; sleeping fibers
 * (retry schedules, expiries, polls) wake in time order as it passes their deadlines. It
 * drives a `ManagedRuntime` shared by many `runPromise` calls (the Promise facade's
 * sandbox) as well as one effect: its state lives in the layer, not in a fiber.
 */
import { Context, Layer, TestClock, TestContext, TestServices } from "effect"

/**
 * A `TestClock` reading `startMs`. Its first `setTime` also ends TestClock's "using time
 * but not advancing the test clock" warning, which would otherwise be logged five seconds
 * after the first sleep of a sandbox that never moves its clock.
 */
export const TestClockAt = (startMs: number): Layer.Layer<TestClock.TestClock> =>
  TestClock.defaultTestClock.pipe(
    Layer.provide(Layer.merge(TestServices.liveLayer(), TestServices.annotationsLayer())),
    Layer.provide(TestContext.LiveContext),
    Layer.tap((context) => Context.get(context, TestClock.TestClock).setTime(startMs))
  )
