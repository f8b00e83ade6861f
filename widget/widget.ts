/**
 * One mounted booking widget: an open shadow root on the host element holding the whole
 * flow (service → staff → day and time → details → confirmation), plain DOM re-rendered per
 * state change. A picked time is held through the API while the visitor types; a 409 offers
 * the API's alternatives; every step change and error is announced through a live region.
 *
 * This module keeps the state and the flow between steps; the look, the views and their key
 * handling live beside it (appearance, steps, calendar, times, hold, details, confirmation)
 * and read the state directly, so the members below are public to those modules, not to the
 * page (index.ts hands out a `WidgetHandle`).
 */
import { applyAppearance } from "./appearance.js"
import { ApiError, type Booking, type Client, type Hold, makeClient, type ManagedBooking, type Service, type Slot, type StaffMember, type WidgetConfig } from "./api.js"
import { type DayIndex, daysWithSlots, pickFirstDay } from "./calendar.js"
import { newId } from "./details.js"
import { h } from "./dom.js"
import { emit } from "./events.js"
import { monthLabel, today } from "./format.js"
import { progress } from "./header.js"
import { releaseHold } from "./hold.js"
import { loadManaged, manageSlots } from "./manage.js"
import type { AnswerValue } from "./questions.js"
import { ANY, type Field, FIELDS, RESTART_OPTIONS, type WidgetHandle, type WidgetOptions } from "./options.js"
import { fillZones, view } from "./steps.js"
import type { Blocked } from "./repeat.js"
import { type Lang, type StringKey, translate } from "./strings.js"
import { BASE_CSS } from "./styles.js"
import { loadStaffNames } from "./team.js"
import { addMonths, detectTimeZone, monthOf, monthRange, type YearMonth } from "./time.js"

export type { Prefill, WidgetHandle, WidgetOptions } from "./options.js"

export type Step = "loading" | "service" | "staff" | "date" | "details" | "done" | "fatal" | "manage" | "cancel" | "move"

export interface Problem {
  readonly code: string
  readonly message: string
  readonly retry?: (() => void) | undefined
}

export class Widget implements WidgetHandle {
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

  // flow state
  step: Step = "loading"
  config: WidgetConfig | undefined
  services: ReadonlyArray<Service> = []
  service: Service | undefined
  staffList: ReadonlyArray<StaffMember> = []
  staffChoice: string = ANY
  zone = detectTimeZone()
  month: YearMonth = { year: 1970, month: 1 }
  monthSlots: ReadonlyArray<Slot> | undefined
  dayIndex: DayIndex | undefined
  readonly slotCache = new Map<string, Promise<ReadonlyArray<Slot>>>()
  day: string | undefined
  focusDay: string | undefined
  focusTime = 0
  slot: Slot | undefined
  hold: Hold | undefined
  /** The timer that renews the hold before it lapses. */
  renewal: ReturnType<typeof setTimeout> | undefined
  alternatives: ReadonlyArray<Slot> = []
  notice: string | undefined
  problem: Problem | undefined
  busy: string | undefined
  fields: Record<Field, string> = { name: "", email: "", phone: "", notes: "" }
  fieldErrors: Partial<Record<Field, string>> = {}
  /** Answers to the service's questions, and what is wrong with them, by question id. */
  answers: Record<string, AnswerValue> = {}
  answerErrors: Record<string, string> = {}
  booking: Booking | undefined
  bookingKey = newId()
  /** The repeat choice: every `repeatWeeks` weeks (0: once), `repeatCount` times as typed. */
  repeatWeeks = 0
  repeatCount = "4"
  repeatError: string | undefined
  /** A refused series' blocked dates; after booking, the series' occurrences and the dates skipped. */
  blocked: ReadonlyArray<Blocked> = []
  occurrences: ReadonlyArray<Booking> = []
  skipped: ReadonlyArray<Blocked> = []
  /** Staff names by id, for naming who was assigned or attends. */
  readonly staffNames = new Map<string, string>()
  /** Manage mode: the booking the manage link opened, and what the last action did. */
  managed: ManagedBooking | undefined
  manageNote: string | undefined

  constructor(readonly host: HTMLElement, options: WidgetOptions, private readonly defaultBase: string) {
    this.options = options
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
      if (options.prefill !== undefined && this.step !== "done") this.prefill(true)
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

  t(key: StringKey, vars?: Record<string, string | number>): string {
    return translate(this.lang, key, vars)
  }

  private readonly onScheme = () => {
    if (this.options.theme === "auto") applyAppearance(this)
  }

  private prefill(overwrite: boolean): void {
    const p = this.options.prefill ?? {}
    for (const field of FIELDS) {
      const value = p[field]
      if (value !== undefined && (overwrite || this.fields[field] === "")) this.fields[field] = String(value)
    }
  }

  /** The API's origin without a trailing slash. */
  baseUrl(): string {
    return (this.options.base_url ?? this.defaultBase).replace(/\/+$/, "")
  }

  private start(): void {
    applyAppearance(this)
    this.step = "loading"
    this.config = undefined
    this.problem = undefined
    this.notice = undefined
    this.alternatives = []
    this.hold = undefined
    this.slot = undefined
    this.booking = undefined
    this.occurrences = []
    this.skipped = []
    this.blocked = []
    this.repeatWeeks = 0
    this.staffNames.clear()
    this.fieldErrors = {}
    this.answers = {}
    this.answerErrors = {}
    this.prefill(false)
    this.managed = undefined
    this.render()
    if (this.options.manage_token !== undefined) {
      this.client = makeClient({ base: this.baseUrl(), key: "", signal: this.controller.signal, onWait: (seconds) => this.waiting(seconds) })
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
    this.busy = this.t("busy", { n: seconds })
    this.render()
    this.announce(this.busy)
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
      this.month = monthOf(today(this))
      void this.slotsFor(serviceId, staffOption === ANY ? undefined : staffOption, this.month).catch(() => undefined)
    }
    this.config = await config
    // The account's branding may set the primary colour.
    applyAppearance(this)
    if (service !== undefined) {
      try {
        this.service = await service
      } catch (error) {
        if (error instanceof ApiError && error.status === 404) {
          return this.fatal("unknown_service", this.t("unknown_service", { id: serviceId! }))
        }
        throw error
      }
      return this.afterService(true)
    }
    this.services = (await services!).filter((s) => s.active && s.staff_ids.length > 0)
    if (this.services.length === 0) return this.fatal("no_services", this.t("no_services"))
    this.go("service")
  }

  /** After the service is known: the staff step, or straight to the calendar. */
  async afterService(first: boolean): Promise<void> {
    const service = this.service!
    const option = this.options.staff
    this.repeatWeeks = 0
    this.blocked = []
    // A team service needs no staff step: the server assigns, or everyone attends.
    const assignment = service.assignment
    if (assignment === "round_robin" || assignment === "collective") loadStaffNames(this)
    if (assignment === "collective" || (assignment === "round_robin" && (option === undefined || option === ANY))) {
      this.staffChoice = ANY
      return this.enterDate(first)
    }
    if (option !== undefined && option !== ANY) {
      if (!service.staff_ids.includes(option)) return this.fatal("unknown_staff", this.t("unknown_staff", { id: option }))
      this.staffChoice = option
      return this.enterDate(first)
    }
    if (option === ANY || service.staff_ids.length <= 1) {
      this.staffChoice = ANY
      return this.enterDate(first)
    }
    this.showLoading()
    const all = await this.client.staff()
    this.busy = undefined
    this.staffList = all.filter((s) => s.active && service.staff_ids.includes(s.id))
    this.go("staff")
  }

  // ---------------------------------------------------------------- state changes

  /** Runs a step of the flow; a failure offers to run it again. */
  run(task: () => Promise<void>): void {
    void task().catch((error) => this.fail(error, () => this.run(task)))
  }

  go(step: Step, focus?: string): void {
    this.step = step
    this.busy = undefined
    this.focusAfter = focus ?? "h2"
    this.render()
    const heading = this.body.querySelector("h2")?.textContent ?? ""
    const shown = progress(this)
    this.announce(shown === undefined ? heading : `${shown}: ${heading}`)
    if (!this.readyEmitted && step !== "loading" && step !== "fatal") {
      this.readyEmitted = true
      emit(this.host, "slotwise:ready", { service: this.service?.id ?? null, step })
    }
  }

  fatal(code: string, message: string): void {
    this.problem = { code, message }
    this.go("fatal")
    emit(this.host, "slotwise:error", { code, message })
  }

  /** A failure during the flow: a retry for network trouble, a fatal message for bad configuration. */
  async fail(error: unknown, retry: () => void): Promise<void> {
    if (this.controller.signal.aborted || this.destroyed) return
    this.busy = undefined
    const notAllowed = () => this.fatal("origin_not_allowed", this.t("origin_not_allowed", { origin: location.origin }))
    let code = "internal_error"
    let message = this.t("failed", { detail: String(error) })
    if (error instanceof ApiError) {
      if (error.status === 0) {
        // The browser hides why a cross-origin call failed. When the very first call (the config)
        // fails but the server's widget.js, readable from any origin, answers, the API refused
        // this page's origin (CORS). Later failures are the network's: they get a retry.
        if (this.config === undefined && await this.client.reachable()) return notAllowed()
        code = "network_error"
        message = this.t("network")
      } else if (error.status === 404 && this.options.manage_token !== undefined) {
        return this.linkInvalid()
      } else if (error.status === 401) {
        return this.fatal("invalid_key", this.t("invalid_key"))
      } else if (error.status === 403) {
        return notAllowed()
      } else {
        code = error.code
        message = this.t("failed", { detail: error.message })
      }
    }
    this.problem = { code, message, retry }
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
    this.busy ??= this.t("loading")
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
    if (this.managed !== undefined) {
      const key = `manage|${month.year}-${month.month}`
      let pending = this.slotCache.get(key)
      if (pending === undefined) {
        pending = manageSlots(this, month)
        pending.catch(() => this.slotCache.delete(key))
        this.slotCache.set(key, pending)
      }
      return pending
    }
    return this.slotsFor(this.service!.id, this.staffChoice === ANY ? undefined : this.staffChoice, month)
  }

  async enterDate(first: boolean): Promise<void> {
    if (first || this.monthSlots === undefined) this.month = monthOf(today(this))
    this.showLoading()
    let slots = await this.monthSlotsFor(this.month)
    // A quiet month: look up to two months ahead before showing an empty calendar.
    for (let i = 0; first && i < 2 && daysWithSlots(this, slots, this.month).size === 0; i++) {
      const next = addMonths(this.month, 1)
      slots = await this.monthSlotsFor(next)
      this.month = next
    }
    this.monthSlots = slots
    pickFirstDay(this)
    this.go("date")
    setTimeout(() => fillZones(this), 0)
  }

  async showMonth(month: YearMonth, focusDay?: string): Promise<void> {
    this.month = month
    this.monthSlots = undefined
    this.showLoading()
    try {
      this.monthSlots = await this.monthSlotsFor(month)
    } catch (error) {
      return this.fail(error, () => void this.showMonth(month, focusDay))
    }
    this.busy = undefined
    const days = daysWithSlots(this, this.monthSlots, month)
    if (focusDay !== undefined) {
      this.focusDay = focusDay
      if (days.has(focusDay)) this.day = focusDay
      // Arrow keys carried focus across the month edge: it lands on that day. From the month
      // buttons, focus stays on the button (restored by render) so it can be pressed again.
      this.focusAfter = `[data-day="${focusDay}"]`
    } else {
      pickFirstDay(this)
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
    const branding = this.config === undefined
      ? !this.options.hide_branding
      : this.config.branding_required || (this.options.hide_branding === undefined ? this.config.powered_by !== false : !this.options.hide_branding)
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
