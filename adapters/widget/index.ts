/**
 * The booking widget's entry (bundled to /widget.js): mounts every
 * `<div data-slotwise-widget data-key="pk_…">` on the page, now and whenever one is added
 * later, and exposes `window.Slotwise.mount(element, options)`.
 */
import { type Prefill, Widget, type WidgetHandle, type WidgetOptions } from "./widget.js"

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

/** Options from `data-*` attributes in kebab case (`data-primary-color`, `data-prefill-email`, …). */
export const optionsFromAttributes = (el: HTMLElement): WidgetOptions => {
  const d = el.dataset
  const prefill: Record<string, string> = {}
  for (const field of ["name", "email", "phone", "notes"] as const) {
    const value = d[`prefill${field[0]!.toUpperCase()}${field.slice(1)}`]
    if (value !== undefined) prefill[field] = value
  }
  const theme = d.theme === "dark" || d.theme === "auto" || d.theme === "light" ? d.theme : undefined
  const options: Record<string, unknown> = {
    key: d.key,
    service: d.service,
    staff: d.staff,
    base_url: d.baseUrl,
    primary_color: d.primaryColor,
    font_family: d.fontFamily,
    radius: d.radius,
    theme,
    locale: d.locale,
    prefill: prefill as Prefill,
    hide_branding: d.hideBranding === undefined ? undefined : d.hideBranding !== "false"
  }
  for (const name of Object.keys(options)) if (options[name] === undefined) delete options[name]
  return options as WidgetOptions
}

const install = (): void => {
  if (window.Slotwise !== undefined) return
  const base = scriptOrigin()
  const mounted = new WeakMap<HTMLElement, WidgetHandle>()

  const mount = (element: HTMLElement, options: WidgetOptions = {}): WidgetHandle => {
    const existing = mounted.get(element)
    if (existing !== undefined) {
      existing.update(options)
      return existing
    }
    const widget = new Widget(element, { ...optionsFromAttributes(element), ...options }, base)
    const handle: WidgetHandle = {
      update: (next) => widget.update(next),
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
