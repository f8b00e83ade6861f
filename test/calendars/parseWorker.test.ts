/**
 * The parse worker: busy ranges read in the worker thread are exactly those read on the
 * event loop, a feed that makes the parser throw is a `FeedParseError` as before, and a
 * worker that dies mid-parse fails that sync (recorded as the calendar's `last_error`) while
 * the process goes on and the next parse starts a new worker. The worker's thread, and only
 * it, runs at the lowest CPU priority on Linux.
 */
import { readdirSync, readFileSync } from "node:fs"
import * as os from "node:os"
import { Effect, Either } from "effect"
import { MessageChannel } from "node:worker_threads"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { FeedParseError, intervalsOf, pairsOf, parseBusy, parseBusyPairs } from "../../adapters/calendars/parse.js"
import { lowerThreadPriority, makeParseWorker, PARSE_THREAD_NICE, ParseWorkerFailed } from "../../adapters/calendars/parseWorker.js"
import { makeFeedReader } from "../../adapters/calendars/reader.js"
import { waitFor } from "../webhooks/receiver.js"
import { type FeedServer, startFeedServer } from "./feedServer.js"

const fixture = (name: string) => readFileSync(new URL(`./fixtures/${name}`, import.meta.url), "utf8")
const window = { start: Date.parse("2026-03-01T00:00:00Z"), end: Date.parse("2026-05-01T00:00:00Z") }

/** Enough daily series that a parse takes a while: time to stop the worker in the middle of it. */
const slowFeed = () => {
  const events: Array<string> = []
  for (let i = 0; i < 400; i++) {
    events.push("BEGIN:VEVENT", `UID:slow-${i}`, "DTSTART:20260101T090000Z", "DTEND:20260101T100000Z", "RRULE:FREQ=DAILY", "END:VEVENT")
  }
  return ["BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//test//EN", ...events, "END:VCALENDAR"].join("\r\n")
}

/** The nice value of each thread of this process (Linux), by thread id, from /proc. */
const threadNices = (): Map<string, number> => {
  const nices = new Map<string, number>()
  for (const tid of readdirSync("/proc/self/task")) {
    try {
      const stat = readFileSync(`/proc/self/task/${tid}/stat`, "utf8")
      // Fields after "(comm)": state is field 3, nice field 19.
      nices.set(tid, Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[16]))
    } catch {
      // The thread ended between the listing and the read.
    }
  }
  return nices
}

const worker = makeParseWorker()
let feeds: FeedServer
beforeAll(async () => {
  feeds = await startFeedServer()
})
afterAll(async () => {
  await worker.terminate()
  await feeds.close()
})

describe("the parse worker", () => {
  it.each([
    ["google.ics", "Europe/Berlin"],
    ["outlook.ics", "UTC"],
    ["apple.ics", "America/New_York"]
  ])("reads %s into exactly the ranges the in-thread parse gives", async (name, zone) => {
    const text = fixture(name)
    const inThread = parseBusy(text, { zone, window })
    expect(inThread.length).toBeGreaterThan(0)
    expect(await worker.parse(text, { zone, window })).toEqual(inThread)
  })

  it.each(["google.ics", "outlook.ics", "apple.ics"])("hands %s's ranges over as pairs that round-trip every range", (name) => {
    const text = fixture(name)
    const pairs = parseBusyPairs(text, { zone: "Europe/Berlin", window })
    const ranges = parseBusy(text, { zone: "Europe/Berlin", window })
    expect(pairs.length).toBe(ranges.length * 2)
    expect(intervalsOf(pairs)).toEqual(ranges)
    expect(pairsOf(ranges)).toEqual(pairs)
    // Moved to another thread and back, as the worker moves it.
    const { port1, port2 } = new MessageChannel()
    const received = new Promise<Float64Array>((resolve) => port2.once("message", resolve))
    port1.postMessage(pairs, [pairs.buffer])
    return received.then((moved) => {
      port1.close()
      expect(pairs.length).toBe(0)
      expect(intervalsOf(moved as Float64Array<ArrayBuffer>)).toEqual(ranges)
    })
  })

  it("runs the parse in a thread of the lowest CPU priority, leaving the event loop's thread as it was", async () => {
    const before = os.getPriority(0)
    await worker.parse(fixture("google.ics"), { zone: "Europe/Berlin", window })
    expect(os.getPriority(0)).toBe(before)
    if (process.platform === "linux") {
      const nices = threadNices()
      expect(nices.get(String(process.pid))).toBe(before)
      expect([...nices.values()].filter((nice) => nice === PARSE_THREAD_NICE).length).toBeGreaterThanOrEqual(1)
    }
  })

  it("lowers the priority only where it is per thread, and goes on where the call is refused", () => {
    const calls: Array<[number, number]> = []
    const record = (pid: number, priority: number) => void calls.push([pid, priority])
    expect(lowerThreadPriority("darwin", record)).toBe(false)
    expect(lowerThreadPriority("win32", record)).toBe(false)
    expect(calls).toEqual([])
    expect(lowerThreadPriority("linux", record)).toBe(true)
    expect(calls).toEqual([[0, PARSE_THREAD_NICE]])
    const refused = () => {
      throw Object.assign(new Error("setpriority: EACCES"), { code: "EACCES" })
    }
    expect(lowerThreadPriority("linux", refused)).toBe(false)
  })

  it("rejects a feed the parser refuses with the same FeedParseError", async () => {
    const text = "BEGIN:VCALENDAR\r\nBEGIN:VEVENT\r\nDTSTART:not a time\r\n"
    let inThread: unknown
    try {
      parseBusy(text, { zone: "UTC", window })
    } catch (error) {
      inThread = error
    }
    expect(inThread).toBeInstanceOf(FeedParseError)
    const inWorker = await worker.parse(text, { zone: "UTC", window }).catch((error: unknown) => error)
    expect(inWorker).toBeInstanceOf(FeedParseError)
    expect((inWorker as Error).message).toBe((inThread as Error).message)
  })

  it("fails the parses under way when the worker dies, and starts a new one for the next", async () => {
    const parsing = worker.parse(slowFeed(), { zone: "UTC", window: { start: window.start, end: window.start + 3650 * 86_400_000 } })
    const outcome = parsing.catch((error: unknown) => error)
    expect(worker.inFlight()).toBe(1)
    await worker.terminate()
    expect(await outcome).toBeInstanceOf(ParseWorkerFailed)
    expect(worker.inFlight()).toBe(0)
    const text = fixture("google.ics")
    expect(await worker.parse(text, { zone: "Europe/Berlin", window })).toEqual(parseBusy(text, { zone: "Europe/Berlin", window }))
  })

  it("fails a read whose worker dies mid-parse, and a feed that makes the parser throw, in words for last_error", async () => {
    feeds.set("/slow.ics", { kind: "ics", body: slowFeed() })
    feeds.set("/broken.ics", { kind: "ics", body: "BEGIN:VCALENDAR\r\nBEGIN:VEVENT\r\nDTSTART:not a time\r\n" })
    const reader = makeFeedReader({ allowPrivate: true }, worker.parse)
    const longWindow = { start: window.start, end: window.start + 300 * 86_400_000 }
    const read = (path: string) =>
      Effect.runPromise(
        Effect.either(
          reader.read({ account_id: "acct_1", url: feeds.url(path), etag: null, last_modified: null, zone: "UTC", window: longWindow })
        )
      )
    const reading = read("/slow.ics")
    await waitFor(async () => worker.running() > 0, 10_000, "the feed sent to the worker")
    await worker.terminate()
    const failed = await reading
    expect(Either.isLeft(failed) && failed.left.message).toMatch(
      /^the calendar reader stopped while reading the feed \(.+\); the next sync reads it again$/
    )

    const refused = await read("/broken.ics")
    expect(Either.isLeft(refused) && refused.left.message).toBe("line 2: a component that begins and does not end")

    // The reader goes on: the same feed is read once the worker is left alone.
    const again = await read("/slow.ics")
    expect(Either.isRight(again) && again.right._tag === "Fetched" && again.right.busy.length).toBeGreaterThan(0)
  })
})
