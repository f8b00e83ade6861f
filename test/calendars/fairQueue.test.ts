/**
 * The queue that serves accounts in turn (the sync queue, the claim of due calendars and the
 * parse workers all use it): each account's items in order, the accounts one after another,
 * and an account that is busy skipped until it is not.
 */
import { describe, expect, it } from "vitest"
import { FairQueue } from "../../src/calendars/fairQueue.js"

const takeAll = (queue: FairQueue<string>, busy: (key: string) => boolean = () => false) => {
  const taken: Array<string> = []
  for (let next = queue.take(busy); next !== undefined; next = queue.take(busy)) taken.push(next.item)
  return taken
}

describe("FairQueue", () => {
  it("serves accounts in turn, however many items one of them queued first", () => {
    const queue = new FairQueue<string>()
    for (let i = 1; i <= 4; i++) queue.push("acct_many", `many-${i}`)
    queue.push("acct_one", "one-1")
    queue.push("acct_two", "two-1")
    queue.push("acct_two", "two-2")
    expect(queue.size).toBe(7)
    expect(takeAll(queue)).toEqual(["many-1", "one-1", "two-1", "many-2", "two-2", "many-3", "many-4"])
    expect(queue.size).toBe(0)
  })

  it("skips a busy account, keeping its turn for when it is not", () => {
    const queue = new FairQueue<string>()
    queue.push("acct_busy", "busy-1")
    queue.push("acct_free", "free-1")
    queue.push("acct_free", "free-2")
    expect(takeAll(queue, (key) => key === "acct_busy")).toEqual(["free-1", "free-2"])
    expect(takeAll(queue)).toEqual(["busy-1"])
  })

  it("takes out an item, or every item that matches, and drains", () => {
    const queue = new FairQueue<string>()
    queue.push("a", "a-1")
    queue.push("a", "a-2")
    queue.push("b", "b-1")
    expect(queue.remove("a", "a-1")).toBe(true)
    expect(queue.remove("a", "a-1")).toBe(false)
    queue.removeWhere((item) => item === "b-1")
    expect(queue.size).toBe(1)
    expect(queue.drain()).toEqual(["a-2"])
    expect(queue.take(() => false)).toBeUndefined()
  })
})
