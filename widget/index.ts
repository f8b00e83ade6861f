/**
 * The booking widget's entry (bundled to /widget.js): mounts every
 * `<div data-slotwise-widget data-key="pk_…">` on the page, now and whenever one is added
 * later, and exposes `window.Slotwise.mount(element, options)`.
 */
import { optionsFromAttributes, readOptions, type WidgetHandle, type WidgetOptions } from "./options.js"
import { Widget } from "./widget.js"

export { optionsFromAttributes }

declare global {
  interface Window {
    Slotwise?: SlotwiseGlobal
  }
}

export interface SlotwiseGlobal {
  readonly version: string
  mount(element: HTMLElement, options?: WidgetOptions): WidgetHandle
}

const SELECTOR = "[data-slotwise-widget]"

/** Where this script came from: the API's default origin. */
const scriptOrigin = (): string => {
  const src = (document.currentScript as HTMLScriptElement | null)?.src ??
    document.querySelector<HTMLScriptElement>("script[src*='widget.js']")?.src
  try {
    return src ? new URL(src).origin : location.origin
  } catch {
    return location.origin
  }
}

const install = (): void => {
  if (window.Slotwise !== undefined) return
  const base = scriptOrigin()
  const mounted = new WeakMap<HTMLElement, WidgetHandle>()

  // A page's script may pass anything: its options are read by the same rules as attributes.
  const mount = (element: HTMLElement, given: WidgetOptions = {}): WidgetHandle => {
    const options = readOptions(given)
    const existing = mounted.get(element)
    if (existing !== undefined) {
      existing.update(options)
      return existing
    }
    const widget = new Widget(element, { ...optionsFromAttributes(element), ...options }, base)
    const handle: WidgetHandle = {
      update: (next) => widget.update(readOptions(next)),
      destroy: () => {
        widget.destroy()
        mounted.delete(element)
      }
    }
    mounted.set(element, handle)
    return handle
  }

  const scan = (node: ParentNode | Element): void => {
    if (node instanceof HTMLElement && node.matches(SELECTOR) && !mounted.has(node)) mount(node)
    for (const el of Array.from(node.querySelectorAll<HTMLElement>(SELECTOR))) if (!mounted.has(el)) mount(el)
  }

  window.Slotwise = { version: "1", mount }
  const observe = () => {
    scan(document)
    new MutationObserver((records) => {
      for (const record of records) {
        for (const node of Array.from(record.addedNodes)) if (node instanceof HTMLElement) scan(node)
        for (const node of Array.from(record.removedNodes)) {
          if (!(node instanceof HTMLElement)) continue
          for (const el of [node, ...Array.from(node.querySelectorAll<HTMLElement>(SELECTOR))]) {
            if (!el.isConnected) mounted.get(el)?.destroy()
          }
        }
      }
    }).observe(document.documentElement, { childList: true, subtree: true })
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", observe, { once: true })
  else observe()
}

install()
