/**
 * A queue served in turns across keys (tenants): each key's items in the order they came,
 * the keys one after another, and a key that is busy (already has work running) skipped
 * until it is not, so one tenant's many or slow items never hold back another's.
 */
export class FairQueue<A> {
  /** Each waiting key's items; the map's order is the keys' turn. */
  private readonly waiting = new Map<string, Array<A>>()
  private count = 0

  get size(): number {
    return this.count
  }

  push(key: string, item: A): void {
    const items = this.waiting.get(key)
    if (items === undefined) this.waiting.set(key, [item])
    else items.push(item)
    this.count++
  }

  /** The next item of the first key in turn that is not `busy`; that key goes to the back of the turn. */
  take(busy: (key: string) => boolean): { readonly key: string; readonly item: A } | undefined {
    for (const [key, items] of this.waiting) {
      if (busy(key)) continue
      const item = items.shift()!
      this.waiting.delete(key)
      if (items.length > 0) this.waiting.set(key, items)
      this.count--
      return { key, item }
    }
    return undefined
  }

  /** Takes `item` out of the queue; whether it was there. */
  remove(key: string, item: A): boolean {
    const items = this.waiting.get(key)
    const at = items?.indexOf(item) ?? -1
    if (items === undefined || at === -1) return false
    items.splice(at, 1)
    if (items.length === 0) this.waiting.delete(key)
    this.count--
    return true
  }

  /** Takes out every waiting item that `matches`. */
  removeWhere(matches: (item: A) => boolean): void {
    for (const [key, items] of [...this.waiting]) {
      for (const item of items.filter(matches)) this.remove(key, item)
    }
  }

  /** Empties the queue, answering every item waiting. */
  drain(): Array<A> {
    const all = [...this.waiting.values()].flat()
    this.waiting.clear()
    this.count = 0
    return all
  }
}
