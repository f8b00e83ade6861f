/**
 * The widget's events: a bubbling, composed `CustomEvent` on the host element for scripts on
 * the page, and the same `{ type, payload }` through `postMessage` for frames and extensions.
 */
export const emit = (host: HTMLElement, type: string, payload: unknown): void => {
  host.dispatchEvent(new CustomEvent(type, { detail: payload, bubbles: true, composed: true }))
  try {
    window.postMessage({ type, payload }, "*")
  } catch {
    // a payload that cannot be cloned is still on the DOM event
  }
}
