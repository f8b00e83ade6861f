/**
 * One mounted booking widget: an open shadow root on the host element holding the whole
 * flow (service → staff → day and time → details → confirmation), plain DOM re-rendered per
 * state change. A picked time is held through the API while the visitor types; a 409 offers
 * the API's alternatives; every step change and error is announced through a live region.
 *
 * This module runs the flow between steps: the flow's data is one immutable `state`, changed
 * only through `apply` by the pure `transition` (state.ts). The look, the views and their key
 * handling live beside it (appearance, steps, calendar, times, hold, details, confirmation),
 * each reading only the members it names of `WidgetHost` (host.ts, which `Widget` implements:
 * they import that, never this module) and reporting what happened as actions; the members
 * below are public to those modules, not to the page (index.ts hands out a `WidgetHandle`).
 */
import { applyAppearance } from "./appearance.js"
import { ApiError, type Client, makeClient, type Slot } from "./api.js"
import { newId } from "./details.js"
import { howToAllowOrigin } from "../src/auth/allowOrigin.js"
import { withoutTrailingSlash } from "../src/ports/trailingSlash.js"
import { h } from "./dom.js"
import { emit } from "./events.js"
import { monthLabel, today } from "./format.js"
import { progress } from "./header.js"
import type { WidgetHost } from "./host.js"
import { releaseHold } from "./hold.js"
import { loadManaged, manageSlots } from "./manage.js"
import { ANY, RESTART_OPTIONS, type WidgetHandle, type WidgetOptions } from "./options.js"
import { type Action, daysWithSlots, initialState, staffFor, type State, transition } from "./state.js"
import { fillZones, view } from "./steps.js"
import { type Lang, type StringKey, translate } from "./strings.js"
import { BASE_CSS } from "./styles.js"
import { loadStaffNames } from "./team.js"
import { addMonths, detectTimeZone, monthOf, monthRange, type YearMonth } from "./time.js"

export type { Prefill, WidgetHandle, WidgetOptions } from "./options.js"

export class Widget implements WidgetHandle, WidgetHost {
  options: WidgetOptions
  readonly root: ShadowRoot
  readonly frame: HTMLDivElement
  readonly body: HTMLDivElement
  readonly live: HTMLDivElement
  readonly footer: HTMLParagraphElement
  readonly probe: HTMLSpanElement
  readonly sheet = new CSSStyleSheet()
  readonly instanceSheet = new CSSStyleSheet()
  readonly media = typeof matchMedia === "function" ? matchMedia("(prefers-color-scheme: dark)") : undefined
  controller = new AbortController()
  client!: Client
  lang: Lang = "en"
  intl = "en"
  readonly formats = new Map<string, Intl.DateTimeFormat>()
  blobUrl: string | undefined
  focusAfter: string | undefined
  readyEmitted = false
  destroyed = false
  zonePicker: HTMLSelectElement | undefined
  /** The flow: changed only through `apply`, by `transition`. */
  state: State
  readonly slotCache = new Map<string, Promise<ReadonlyArray<Slot>>>()
  /** The timer that renews the hold before it lapses. */
  renewal: ReturnType<typeof setTimeout> | undefined
  /** Staff names by id, for naming who was assigned or attends. */
  readonly staffNames = new Map<string, string>()

  constructor(readonly host: HTMLElement, options: WidgetOptions, private readonly defaultBase: string) {
    this.options = options
    this.state = initialState(detectTimeZone(), newId(), options.prefill)
    this.root = host.shadowRoot ?? host.attachShadow({ mode: "open" })
    this.sheet.replaceSync(BASE_CSS)
    this.root.adoptedStyleSheets = [this.sheet, this.instanceSheet]
    this.body = h("div")
    this.live = h("div", { class: "sr", role: "status", "aria-live": "polite", "aria-atomic": "true" })
    this.footer = h("p", { class: "footer" })
    this.probe = h("span", { class: "probe", "aria-hidden": "true" })
    this.frame = h("div", { class: "sw" }, this.body, this.live, this.footer, this.probe)
    this.root.replaceChildren(this.frame)
    this.media?.addEventListener("change", this.onScheme)
    this.start()
  }

  // ---------------------------------------------------------------- public

  update(options: WidgetOptions): void {
    if (this.destroyed) return
    const before = this.options
    this.options = { ...before, ...options, prefill: { ...before.prefill, ...options.prefill } }
    if (RESTART_OPTIONS.some((k) => options[k] !== undefined && options[k] !== before[k])) {
      this.controller.abort()
      this.controller = new AbortController()
      releaseHold(this)
      this.slotCache.clear()
      this.start()
    } else {
      applyAppearance(this)
      if (options.prefill !== undefined && this.state.step._tag !== "done")
        this.apply({ _tag: "Prefilled", prefill: this.options.prefill, overwrite: true })
      this.render()
    }
  }

  destroy(): void {
    if (this.destroyed) return
    this.destroyed = true
    this.controller.abort()
    releaseHold(this)
    this.media?.removeEventListener("change", this.onScheme)
    if (this.blobUrl !== undefined) URL.revokeObjectURL(this.blobUrl)
    this.root.replaceChildren()
    this.root.adoptedStyleSheets = []
  }

  // ---------------------------------------------------------------- setup

  /** The zone times are shown in (`Formatting`). */
  get zone(): string {
    return this.state.zone
  }

  t(key: StringKey, vars?: Record<string, string | number>): string {
    return translate(this.lang, key, vars)
  }

  private readonly onScheme = () => {
    if (this.options.theme === "auto") applyAppearance(this)
  }

  /** The API's origin without a trailing slash. */
  baseUrl(): string {
    return withoutTrailingSlash(this.options.base_url ?? this.defaultBase)
  }

  private start(): void {
    applyAppearance(this)
    this.apply({ _tag: "Restarted", prefill: this.options.prefill })
    this.staffNames.clear()
    this.render()
    if (this.options.manage_token !== undefined) {
      this.client = makeClient({
        base: this.baseUrl(),
        key: "",
        signal: this.controller.signal,
        onWait: (seconds) => this.waiting(seconds)
      })
      void loadManaged(this).catch((error) => this.fail(error, () => this.start()))
      return
    }
    const key = (this.options.key ?? "").trim()
    if (key === "") return this.fatal("missing_key", this.t("missing_key"))
    // A secret key in a page is a leak already; never send it anywhere.
    if (key.startsWith("sk_")) return this.fatal("secret_key", this.t("secret_key"))
    if (!key.startsWith("pk_")) return this.fatal("invalid_key", this.t("invalid_key"))
    this.client = makeClient({
      base: this.baseUrl(),
      key,
      signal: this.controller.signal,
      onWait: (seconds) => this.waiting(seconds)
    })
    void this.load().catch((error) => this.fail(error, () => this.start()))
  }

  private waiting(seconds: number): void {
    const text = this.t("busy", { n: seconds })
    this.apply({ _tag: "Busy", text })
    this.render()
    this.announce(text)
  }

  /** A manage link that opens nothing: one message, whatever was wrong with it. */
  linkInvalid(): void {
    this.fatal("link_invalid", this.t("link_invalid"))
  }

  private async load(): Promise<void> {
    const serviceId = this.options.service
    const staffOption = this.options.staff
    const config = this.client.config()
    const service = serviceId === undefined ? undefined : this.client.service(serviceId)
    const services = serviceId === undefined ? this.client.services() : undefined
    // Start the first month's slots with the rest: the calendar usually needs them next.
    if (serviceId !== undefined) {
      void this.slotsFor(serviceId, staffOption === ANY ? undefined : staffOption, monthOf(today(this))).catch(() => undefined)
    }
    this.apply({ _tag: "ConfigLoaded", config: await config })
    // The account's branding may set the primary colour.
    applyAppearance(this)
    if (service !== undefined) {
      try {
        this.apply({ _tag: "ServiceChosen", service: await service })
      } catch (error) {
        if (error instanceof ApiError && error.status === 404) {
          return this.fatal("unknown_service", this.t("unknown_service", { id: serviceId! }))
        }
        throw error
      }
      return this.afterService(true)
    }
    const listed = (await services!).filter((s) => s.active && s.staff_ids.length > 0)
    if (listed.length === 0) return this.fatal("no_services", this.t("no_services"))
    this.apply({ _tag: "ServicesLoaded", services: listed })
    this.go({ _tag: "Shown", step: "service" })
  }

  /** After the service is known: the staff step, or straight to the calendar. */
  async afterService(first: boolean): Promise<void> {
    const service = this.state.service!
    const assignment = service.assignment
    if (assignment === "round_robin" || assignment === "collective") loadStaffNames(this)
    const staff = staffFor(service, this.options.staff)
    if (typeof staff === "object") return this.fatal("unknown_staff", this.t("unknown_staff", { id: staff.unknown }))
    if (staff !== "ask") {
      this.apply({ _tag: "StaffChosen", staff })
      return this.enterDate(first)
    }
    this.showLoading()
    const all = await this.client.staff()
    this.go({ _tag: "StaffLoaded", staff: all.filter((s) => s.active && service.staff_ids.includes(s.id)) })
  }

  // ---------------------------------------------------------------- state changes

  /** Runs a step of the flow; a failure offers to run it again. */
  run(task: () => Promise<void>): void {
    void task().catch((error) => this.fail(error, () => this.run(task)))
  }

  /** Changes the state, nothing else: the caller renders when the change shows. */
  apply(action: Action): void {
    this.state = transition(this.state, action)
  }

  /** Changes the state to another step: rendered, focus on its heading (or `focus`), and announced. */
  go(action: Action, focus?: string): void {
    this.apply(action)
    const step = this.state.step._tag
    this.focusAfter = focus ?? "h2"
    this.render()
    const heading = this.body.querySelector("h2")?.textContent ?? ""
    const shown = progress(this)
    this.announce(shown === undefined ? heading : `${shown}: ${heading}`)
    if (!this.readyEmitted && step !== "loading" && step !== "fatal") {
      this.readyEmitted = true
      emit(this.host, "slotwise:ready", { service: this.state.service?.id ?? null, step })
    }
  }

  fatal(code: string, message: string): void {
    this.go({ _tag: "Fatal", problem: { code, message } })
    emit(this.host, "slotwise:error", { code, message })
  }

  /** A failure during the flow: a retry for network trouble, a fatal message for bad configuration. */
  async fail(error: unknown, retry: () => void): Promise<void> {
    if (this.controller.signal.aborted || this.destroyed) return
    // The visitor reads a short message; the page's developer, in the console, how to allow
    // this origin: the server's own words when its refusal was readable, else the same words.
    const notAllowed = (
      detail = `${location.origin} is not an allowed origin of this key's account: ${howToAllowOrigin(location.origin)}`
    ) => {
      console.error(`Slotwise widget: ${detail}`)
      this.fatal("origin_not_allowed", this.t("origin_not_allowed"))
    }
    let code = "internal_error"
    let message = this.t("failed", { detail: String(error) })
    if (error instanceof ApiError) {
      if (error.status === 0) {
        // The browser hides why a cross-origin call failed. When the very first call (the config)
        // fails but the server's widget.js, readable from any origin, answers, the API refused
        // this page's origin (CORS). Later failures are the network's: they get a retry.
        if (this.state.config === undefined && await this.client.reachable()) return notAllowed()
        code = "network_error"
        message = this.t("network")
      } else if (error.status === 404 && this.options.manage_token !== undefined) {
        return this.linkInvalid()
      } else if (error.status === 401) {
        return this.fatal("invalid_key", this.t("invalid_key"))
      } else if (error.status === 403) {
        return notAllowed(error.message)
      } else {
        code = error.code
        message = this.t("failed", { detail: error.message })
      }
    }
    this.apply({ _tag: "Failed", problem: { code, message, retry } })
    this.render()
    if (error instanceof ApiError) this.focus(".alert")
    emit(this.host, "slotwise:error", { code, message })
  }

  announce(text: string): void {
    // Cleared first, so the same message twice is announced twice.
    this.live.textContent = ""
    setTimeout(() => (this.live.textContent = text), 50)
  }

  private focus(selector: string): void {
    const el = this.body.querySelector<HTMLElement>(selector)
    if (el !== null) {
      if (el.tagName === "H2" || el.classList.contains("alert") || el.classList.contains("notice")) el.setAttribute("tabindex", "-1")
      el.focus()
    }
  }

  /** A step is waiting on the API; a "waiting out a 429" message already shown stays. */
  private showLoading(): void {
    this.apply({ _tag: "Busy", text: this.t("loading"), keep: true })
    this.render()
  }

  // ---------------------------------------------------------------- slots

  private slotsFor(serviceId: string, staffId: string | undefined, month: YearMonth): Promise<ReadonlyArray<Slot>> {
    const key = `${serviceId}|${staffId ?? ""}|${month.year}-${month.month}`
    let pending = this.slotCache.get(key)
    if (pending === undefined) {
      pending = this.client.slots({ service_id: serviceId, staff_id: staffId, ...monthRange(month) })
      pending.catch(() => this.slotCache.delete(key))
      this.slotCache.set(key, pending)
    }
    return pending
  }

  /** The chosen service's and staff member's slots in a month. */
  monthSlotsFor(month: YearMonth): Promise<ReadonlyArray<Slot>> {
    if (this.state.managed !== undefined) {
      const key = `manage|${month.year}-${month.month}`
      let pending = this.slotCache.get(key)
      if (pending === undefined) {
        pending = manageSlots(this, month)
        pending.catch(() => this.slotCache.delete(key))
        this.slotCache.set(key, pending)
      }
      return pending
    }
    const { service, staffChoice } = this.state
    return this.slotsFor(service!.id, staffChoice === ANY ? undefined : staffChoice, month)
  }

  async enterDate(first: boolean): Promise<void> {
    let month = first || this.state.monthSlots === undefined ? monthOf(today(this)) : this.state.month
    this.showLoading()
    let slots = await this.monthSlotsFor(month)
    // A quiet month: look up to two months ahead before showing an empty calendar.
    for (let i = 0; first && i < 2 && daysWithSlots(this.zone, slots, month).size === 0; i++) {
      const next = addMonths(month, 1)
      slots = await this.monthSlotsFor(next)
      month = next
    }
    this.go({ _tag: "DateEntered", month, slots })
    setTimeout(() => fillZones(this), 0)
  }

  async showMonth(month: YearMonth, focusDay?: string): Promise<void> {
    this.apply({ _tag: "MonthRequested", month, text: this.t("loading") })
    this.render()
    let slots: ReadonlyArray<Slot>
    try {
      slots = await this.monthSlotsFor(month)
    } catch (error) {
      return this.fail(error, () => void this.showMonth(month, focusDay))
    }
    this.apply({ _tag: "MonthShown", slots, focusDay })
    const days = daysWithSlots(this.zone, slots, month)
    if (focusDay !== undefined) {
      // Arrow keys carried focus across the month edge: it lands on that day. From the month
      // buttons, focus stays on the button (restored by render) so it can be pressed again.
      this.focusAfter = `[data-day="${focusDay}"]`
    }
    this.render()
    this.announce(days.size === 0 ? this.t("no_times_month") : monthLabel(this, month))
  }

  // ---------------------------------------------------------------- rendering

  render(): void {
    if (this.destroyed) return
    const active = this.root.activeElement as HTMLElement | null
    const activeKey = active?.getAttribute("data-focus") ?? undefined
    this.body.replaceChildren(...view(this))
    // Free plans always show it; on paid plans the widget's own option wins over the account's choice.
    const config = this.state.config
    const branding = config === undefined
      ? !this.options.hide_branding
      : config.branding_required || (this.options.hide_branding === undefined ? config.powered_by !== false : !this.options.hide_branding)
    this.footer.replaceChildren(
      ...(branding ? [h("a", { href: "https://slotwise.dev", target: "_blank", rel: "noopener" }, this.t("branding"))] : [])
    )
    this.footer.hidden = !branding
    const target = this.focusAfter
    this.focusAfter = undefined
    if (target !== undefined) this.focus(target)
    else if (activeKey !== undefined) this.body.querySelector<HTMLElement>(`[data-focus="${activeKey}"]`)?.focus()
  }
}
