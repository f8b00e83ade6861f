/**
 * The parse workers against hostile feeds (hostileFeeds.ts): a parse past the wall-clock
 * limit or out of memory terminates its worker and fails with the reason while a new worker
 * takes the next feed; one account's feeds never delay another's; a parse given up leaves the
 * queue or its worker; an idle pool keeps no process alive.
 */
import { spawn } from "node:child_process"
import { fileURLToPath } from "node:url"
import { afterEach, describe, expect, it } from "vitest"
import { FeedParseError } from "../../adapters/calendars/parse.js"
import { makeParseWorker, type ParseWorker, ParseWorkerFailed } from "../../adapters/calendars/parseWorker.js"
import { waitFor } from "../webhooks/receiver.js"
import { junkTimezone, millionParameters, minutely2000, oneEvent } from "./hostileFeeds.js"

const window = { start: Date.parse("2026-03-01T00:00:00Z"), end: Date.parse("2026-05-01T00:00:00Z") }
const options = { zone: "UTC", window }
/** No step budget to speak of: only the wall-clock limit ends these parses. */
const UNBOUNDED = { stepsPerFeed: 1e12, stepsPerSeries: 1e12 }
const ONE_EVENT = [{ start: Date.parse("2026-03-02T09:00:00Z"), end: Date.parse("2026-03-02T10:00:00Z") }]

/** Thousands of events: a few MB of parsed objects. */
const manyEvents = (count: number) => {
  const lines: Array<string> = []
  for (let i = 0; i < count; i++) lines.push("BEGIN:VEVENT", `UID:e${i}`, "DTSTART:20260302T090000Z", "DURATION:PT1H", "END:VEVENT")
  return ["BEGIN:VCALENDAR", ...lines, "END:VCALENDAR"].join("\r\n")
}

const pools: Array<ParseWorker> = []
const pool = (...args: Parameters<typeof makeParseWorker>) => {
  const made = makeParseWorker(...args)
  pools.push(made)
  return made
}
afterEach(async () => {
  await Promise.all(pools.splice(0).map((p) => p.terminate()))
})

describe("the parse workers", () => {
  it("terminate a worker past the wall-clock limit, fail its parse with the reason, and start a new one", async () => {
    const workers = pool({ timeLimitMs: 300, limits: UNBOUNDED })
    const failed = await workers.parse(minutely2000(), options).catch((error: unknown) => error)
    expect(failed).toBeInstanceOf(ParseWorkerFailed)
    expect((failed as Error).message).toBe("reading the feed took longer than 0.3 s (the limit); the next sync reads it again")
    expect(workers.started()).toBe(1)
    expect(await workers.parse(oneEvent(), options)).toEqual(ONE_EVENT)
    expect(workers.started()).toBe(2)
  })

  it("terminate a worker that runs out of memory (its resource limit), and start a new one", async () => {
    const workers = pool({ memoryMb: 16 })
    const failed = await workers.parse(manyEvents(60_000), options).catch((error: unknown) => error)
    expect(failed).toBeInstanceOf(ParseWorkerFailed)
    expect((failed as Error).message).toBe("reading the feed needed more than 16 MB of memory (the limit); the next sync reads it again")
    expect(await workers.parse(oneEvent(), options)).toEqual(ONE_EVENT)
    expect(workers.started()).toBe(2)
  })

  it("refuse the junk time zone and the million-parameter line in the worker, as FeedParseErrors", async () => {
    const workers = pool()
    for (
      const [feed, message] of [
        [junkTimezone(), "line 6: a time zone of the feed's own repeats FREQ=SECONDLY; a time zone's rules must repeat yearly"],
        [millionParameters(), "line 6: a content line longer than 65,536 characters"]
      ] as const
    ) {
      const refused = await workers.parse(feed, options).catch((error: unknown) => error)
      expect(refused).toBeInstanceOf(FeedParseError)
      expect((refused as Error).message).toBe(message)
    }
    expect(workers.started()).toBe(1)
  })

  it("parse another account's feed while one account's hostile feeds are read, one of them at a time", async () => {
    const workers = pool({ workers: 2, limits: UNBOUNDED })
    const hostile = new AbortController()
    const job = { key: "acct_hostile", signal: hostile.signal }
    const first = workers.parse(minutely2000(), options, job).catch((error: unknown) => error)
    const second = workers.parse(minutely2000(), options, job).catch((error: unknown) => error)
    await waitFor(async () => workers.running("acct_hostile") === 1, 10_000, "the hostile feed being read")
    expect(await workers.parse(oneEvent(), options, { key: "acct_other" })).toEqual(ONE_EVENT)
    // The hostile account's first feed is still being read, and its second waits for it.
    expect(workers.running("acct_hostile")).toBe(1)
    expect(workers.inFlight()).toBe(2)
    hostile.abort()
    for (const given of await Promise.all([first, second])) expect((given as Error).message).toBe("the parse was given up")
    expect(workers.inFlight()).toBe(0)
    expect(await workers.parse(oneEvent(), options, { key: "acct_hostile" })).toEqual(ONE_EVENT)
  })

  it("keep no process alive once idle", async () => {
    const module = fileURLToPath(new URL("../../adapters/calendars/parseWorker.ts", import.meta.url))
    const script = `import { makeParseWorker } from ${JSON.stringify(module)}
const busy = await makeParseWorker().parse("BEGIN:VCALENDAR\\r\\nBEGIN:VEVENT\\r\\nDTSTART:20260302T090000Z\\r\\nDURATION:PT1H\\r\\nEND:VEVENT\\r\\nEND:VCALENDAR", { zone: "UTC", window: { start: 0, end: 2e12 } })
console.log(busy.length)`
    const child = spawn(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], {
      stdio: ["ignore", "pipe", "inherit"]
    })
    let out = ""
    child.stdout.on("data", (chunk) => (out += chunk))
    const code = await new Promise<number | null>((resolve) => child.on("exit", resolve))
    expect({ code, out: out.trim() }).toEqual({ code: 0, out: "1" })
  })
})
