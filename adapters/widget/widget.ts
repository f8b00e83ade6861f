/**
 * One mounted booking widget: an open shadow root on the host element holding the whole
 * flow (service → staff → day and time → details → confirmation), plain DOM re-rendered per
 * state change. A picked time is held through the API while the visitor types; a 409 offers
 * the API's alternatives; every step change and error is announced through a live region.
 */
import { ApiError, type Booking, type Client, type Hold, makeClient, type Service, type Slot, type StaffMember, type WidgetConfig } from "./api.js"
import { type Lang, langOf, type StringKey, translate } from "./strings.js"
import { appearanceCss, BASE_CSS, contrast, luminance, safeColor, safeFont, safeRadius } from "./styles.js"
import {
  addDays,
  addMonths,
  civil,
  dateKey,
  daysInMonth,
  detectTimeZone,
  ics,
  isTimeZone,
  monthOf,
  monthRange,
  timeZones,
  weekday,
  type YearMonth
} from "./time.js"

export interface Prefill {
  readonly name?: string | undefined
  readonly email?: string | undefined
  readonly phone?: string | undefined
  readonly notes?: string | undefined
}

export interface WidgetOptions {
  readonly key?: string | undefined
  readonly service?: string | undefined
  /** A staff id, or `"any"` to skip the staff step. */
  readonly staff?: string | undefined
  readonly base_url?: string | undefined
  readonly primary_color?: string | undefined
  readonly font_family?: string | undefined
  readonly radius?: string | number | undefined
  readonly theme?: "light" | "dark" | "auto" | undefined
  readonly locale?: string | undefined
  readonly prefill?: Prefill | undefined
  readonly hide_branding?: boolean | undefined
}

export interface WidgetHandle {
  update(options: WidgetOptions): void
  destroy(): void
}

type Step = "loading" | "service" | "staff" | "date" | "details" | "done" | "fatal"
type Field = "name" | "email" | "phone" | "notes"

interface Problem {
  readonly code: string
  readonly message: string
  readonly retry?: (() => void) | undefined
}

const HOLD_SECONDS = 600
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/
const PHONE = /^\+?[0-9 ()\-.]{3,32}$/
const ANY = "any"
const DEFAULT_PRIMARY = { light: "#2563eb", dark: "#93c5fd" }

type Child = Node | string | null | undefined | false
type Props = Record<string, string | number | boolean | null | undefined | ((event: any) => void)>

/** A DOM element: `on…` props become listeners, `value` a property, the rest attributes. Never `style`. */
const h = <K extends keyof HTMLElementTagNameMap>(tag: K, props: Props = {}, ...children: Array<Child | Array<Child>>) => {
  const el = document.createElement(tag)
  for (const [name, value] of Object.entries(props)) {
    if (value === undefined || value === null || value === false) continue
    if (typeof value === "function") el.addEventListener(name.slice(2), value)
    else if (name === "value") (el as HTMLInputElement).value = String(value)
    else el.setAttribute(name, value === true ? "" : String(value))
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue
    el.append(child)
  }
  return el
}

const newId = (): string =>
  typeof crypto.randomUUID === "function" ? crypto.randomUUID() : `${Date.now().toString(36)}-${Math.random().toString(36).slice(2)}`

export class Widget implements WidgetHandle {
  private options: WidgetOptions
  private readonly root: ShadowRoot
  private readonly frame: HTMLDivElement
  private readonly body: HTMLDivElement
  private readonly live: HTMLDivElement
  private readonly footer: HTMLParagraphElement
  private readonly probe: HTMLSpanElement
  private readonly sheet = new CSSStyleSheet()
  private readonly instanceSheet = new CSSStyleSheet()
  private readonly media = typeof matchMedia === "function" ? matchMedia("(prefers-color-scheme: dark)") : undefined
  private controller = new AbortController()
  private client!: Client
  private lang: Lang = "en"
  private intl = "en"
  private blobUrl: string | undefined
  private focusAfter: string | undefined
  private readyEmitted = false
  private destroyed = false

  // flow state
  private step: Step = "loading"
  private config: WidgetConfig | undefined
  private services: ReadonlyArray<Service> = []
  private service: Service | undefined
  private staffList: ReadonlyArray<StaffMember> = []
  private staffChoice: string = ANY
  private zone = detectTimeZone()
  private month: YearMonth = { year: 1970, month: 1 }
  private monthSlots: ReadonlyArray<Slot> | undefined
  private readonly slotCache = new Map<string, Promise<ReadonlyArray<Slot>>>()
  private day: string | undefined
  private focusDay: string | undefined
  private focusTime = 0
  private slot: Slot | undefined
  private hold: Hold | undefined
  private alternatives: ReadonlyArray<Slot> = []
  private notice: string | undefined
  private problem: Problem | undefined
  private busy: string | undefined
  private fields: Record<Field, string> = { name: "", email: "", phone: "", notes: "" }
  private fieldErrors: Partial<Record<Field, string>> = {}
  private booking: Booking | undefined
  private bookingKey = newId()

  constructor(private readonly host: HTMLElement, options: WidgetOptions, private readonly defaultBase: string) {
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
    const restart = (["key", "service", "staff", "base_url"] as const).some((k) => options[k] !== undefined && options[k] !== before[k])
    if (restart) {
      this.controller.abort()
      this.controller = new AbortController()
      this.releaseHold()
      this.slotCache.clear()
      this.start()
    } else {
      this.applyAppearance()
      if (options.prefill !== undefined && this.step !== "done") this.prefill(true)
      this.render()
    }
  }

  destroy(): void {
    if (this.destroyed) return
    this.destroyed = true
    this.controller.abort()
    this.releaseHold()
    this.media?.removeEventListener("change", this.onScheme)
    if (this.blobUrl !== undefined) URL.revokeObjectURL(this.blobUrl)
    this.root.replaceChildren()
    this.root.adoptedStyleSheets = []
  }

  // ---------------------------------------------------------------- setup

  private t(key: StringKey, vars?: Record<string, string | number>): string {
    return translate(this.lang, key, vars)
  }

  private readonly onScheme = () => {
    if (this.options.theme === "auto") this.applyAppearance()
  }

  private applyAppearance(): void {
    const locale = this.options.locale ?? (typeof navigator === "undefined" ? "en" : navigator.language) ?? "en"
    this.lang = langOf(locale)
    let intl: string = this.lang
    try {
      const canonical = Intl.getCanonicalLocales(locale)[0]
      if (canonical !== undefined && langOf(canonical) === this.lang && canonical.toLowerCase().startsWith(this.lang)) intl = canonical
    } catch {
      // not a BCP 47 tag: the table's language
    }
    this.intl = intl
    const theme = this.options.theme === "dark" || (this.options.theme === "auto" && this.media?.matches === true) ? "dark" : "light"
    this.frame.setAttribute("data-theme", theme)
    this.frame.setAttribute("lang", this.intl)
    const primary = safeColor(this.options.primary_color) ?? DEFAULT_PRIMARY[theme]
    const base = { primary, font: safeFont(this.options.font_family), radius: safeRadius(this.options.radius) }
    this.instanceSheet.replaceSync(appearanceCss({ ...base, onPrimary: "#fff", primaryLine: primary }))
    // The text on primary-coloured buttons: white or near-black, whichever contrasts more.
    const lum = this.probe.isConnected ? luminance(getComputedStyle(this.probe).color) : undefined
    if (lum !== undefined) {
      const onPrimary = contrast(lum, 1) >= contrast(lum, luminance("rgb(17,24,39)")!) ? "#fff" : "#111827"
      const bg = luminance(theme === "dark" ? "rgb(17,24,39)" : "rgb(255,255,255)")!
      // Time buttons are outlined in the primary colour when it contrasts enough with the background.
      const primaryLine = contrast(lum, bg) >= 3 ? primary : "var(--sw-line)"
      this.instanceSheet.replaceSync(appearanceCss({ ...base, onPrimary, primaryLine }))
    }
  }

  private prefill(overwrite: boolean): void {
    const p = this.options.prefill ?? {}
    for (const field of ["name", "email", "phone", "notes"] as const) {
      const value = p[field]
      if (value !== undefined && (overwrite || this.fields[field] === "")) this.fields[field] = String(value)
    }
  }

  private start(): void {
    this.applyAppearance()
    this.step = "loading"
    this.config = undefined
    this.problem = undefined
    this.notice = undefined
    this.alternatives = []
    this.hold = undefined
    this.slot = undefined
    this.booking = undefined
    this.fieldErrors = {}
    this.prefill(false)
    this.render()
    const key = (this.options.key ?? "").trim()
    if (key === "") return this.fatal("missing_key", this.t("missing_key"))
    // A secret key in a page is a leak already; never send it anywhere.
    if (key.startsWith("sk_")) return this.fatal("secret_key", this.t("secret_key"))
    if (!key.startsWith("pk_")) return this.fatal("invalid_key", this.t("invalid_key"))
    const base = (this.options.base_url ?? this.defaultBase).replace(/\/+$/, "")
    const controller = this.controller
    this.client = makeClient({
      base,
      key,
      signal: controller.signal,
      onWait: (seconds) => {
        this.busy = this.t("busy", { n: seconds })
        this.render()
        this.announce(this.busy)
      }
    })
    void this.load().catch((error) => this.fail(error, () => this.start()))
  }

  private async load(): Promise<void> {
    const serviceId = this.options.service
    const staffOption = this.options.staff
    const config = this.client.config()
    const service = serviceId === undefined ? undefined : this.client.service(serviceId)
    const services = serviceId === undefined ? this.client.services() : undefined
    // Start the first month's slots with the rest: the calendar usually needs them next.
    if (serviceId !== undefined) {
      this.month = monthOf(dateKey(Date.now(), this.zone))
      void this.slotsFor(serviceId, staffOption === ANY ? undefined : staffOption, this.month).catch(() => undefined)
    }
    this.config = await config
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
  private async afterService(first: boolean): Promise<void> {
    const service = this.service!
    const option = this.options.staff
    if (option !== undefined && option !== ANY) {
      if (!service.staff_ids.includes(option)) return this.fatal("unknown_staff", this.t("unknown_staff", { id: option }))
      this.staffChoice = option
      return this.enterDate(first)
    }
    if (option === ANY || service.staff_ids.length <= 1) {
      this.staffChoice = ANY
      return this.enterDate(first)
    }
    this.busy ??= this.t("loading") // a "waiting out a 429" message stays
    this.render()
    const all = await this.client.staff()
    this.busy = undefined
    this.staffList = all.filter((s) => s.active && service.staff_ids.includes(s.id))
    this.go("staff")
  }

  // ---------------------------------------------------------------- state changes

  private go(step: Step, focus?: string): void {
    this.step = step
    this.busy = undefined
    this.focusAfter = focus ?? "h2"
    this.render()
    const heading = this.body.querySelector("h2")?.textContent ?? ""
    const progress = this.progress()
    this.announce(progress === undefined ? heading : `${progress}: ${heading}`)
    if (!this.readyEmitted && step !== "loading" && step !== "fatal") {
      this.readyEmitted = true
      this.emit("slotwise:ready", { service: this.service?.id ?? null, step })
    }
  }

  private fatal(code: string, message: string): void {
    this.problem = { code, message }
    this.go("fatal")
    this.emit("slotwise:error", { code, message })
  }

  /** A failure during the flow: a retry for network trouble, a fatal message for bad configuration. */
  private async fail(error: unknown, retry: () => void): Promise<void> {
    if (this.controller.signal.aborted || this.destroyed) return
    this.busy = undefined
    if (!(error instanceof ApiError)) {
      const message = this.t("failed", { detail: String(error) })
      this.problem = { code: "internal_error", message, retry }
      this.render()
      this.emit("slotwise:error", { code: "internal_error", message })
      return
    }
    if (error.status === 0) {
      // The browser hides why a cross-origin call failed. When the very first call (the config)
      // fails but the server's widget.js, readable from any origin, answers, the API refused
      // this page's origin (CORS). Later failures are the network's: they get a retry.
      if (this.config === undefined && await this.client.reachable()) {
        return this.fatal("origin_not_allowed", this.t("origin_not_allowed", { origin: location.origin }))
      }
      const message = this.t("network")
      this.problem = { code: "network_error", message, retry }
      this.render()
      this.focus(".alert")
      this.emit("slotwise:error", { code: "network_error", message })
      return
    }
    if (error.status === 401) return this.fatal("invalid_key", this.t("invalid_key"))
    if (error.status === 403) return this.fatal("origin_not_allowed", this.t("origin_not_allowed", { origin: location.origin }))
    const message = this.t("failed", { detail: error.message })
    this.problem = { code: error.code, message, retry }
    this.render()
    this.focus(".alert")
    this.emit("slotwise:error", { code: error.code, message })
  }

  private emit(type: string, payload: unknown): void {
    this.host.dispatchEvent(new CustomEvent(type, { detail: payload, bubbles: true, composed: true }))
    try {
      window.postMessage({ type, payload }, "*")
    } catch {
      // a payload that cannot be cloned is still on the DOM event
    }
  }

  private announce(text: string): void {
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

  private stepsShown(): Array<Step> {
    const steps: Array<Step> = []
    if (this.options.service === undefined) steps.push("service")
    if (this.staffList.length > 1 && (this.options.staff === undefined)) steps.push("staff")
    steps.push("date", "details", "done")
    return steps
  }

  private progress(): string | undefined {
    const steps = this.stepsShown()
    const index = steps.indexOf(this.step)
    return index < 0 ? undefined : this.t("step", { n: index + 1, total: steps.length })
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

  private staffParam(): string | undefined {
    return this.staffChoice === ANY ? undefined : this.staffChoice
  }

  private async enterDate(first: boolean): Promise<void> {
    const today = dateKey(Date.now(), this.zone)
    if (first || this.monthSlots === undefined) this.month = monthOf(today)
    this.busy ??= this.t("loading") // a "waiting out a 429" message stays
    this.render()
    let slots = await this.slotsFor(this.service!.id, this.staffParam(), this.month)
    // A quiet month: look up to two months ahead before showing an empty calendar.
    for (let i = 0; first && i < 2 && this.daysWithSlots(slots, this.month).size === 0; i++) {
      const next = addMonths(this.month, 1)
      slots = await this.slotsFor(this.service!.id, this.staffParam(), next)
      this.month = next
    }
    this.monthSlots = slots
    this.pickFirstDay()
    this.go("date")
    setTimeout(this.fillZones, 0)
  }

  private async showMonth(month: YearMonth, focusDay?: string): Promise<void> {
    this.month = month
    this.monthSlots = undefined
    this.busy ??= this.t("loading") // a "waiting out a 429" message stays
    this.render()
    try {
      this.monthSlots = await this.slotsFor(this.service!.id, this.staffParam(), month)
    } catch (error) {
      return this.fail(error, () => void this.showMonth(month, focusDay))
    }
    this.busy = undefined
    const days = this.daysWithSlots(this.monthSlots, month)
    if (focusDay !== undefined) {
      this.focusDay = focusDay
      if (days.has(focusDay)) this.day = focusDay
    } else {
      this.pickFirstDay()
    }
    // Arrow keys carried focus across the month edge: it lands on that day. From the month
    // buttons, focus stays on the button (restored by render) so it can be pressed again.
    if (focusDay !== undefined) this.focusAfter = `[data-day="${focusDay}"]`
    this.render()
    this.announce(days.size === 0 ? this.t("no_times_month") : this.monthLabel())
  }

  private pickFirstDay(): void {
    const days = [...this.daysWithSlots(this.monthSlots ?? [], this.month)].sort()
    this.day = days[0]
    this.focusDay = days[0] ?? civil(this.month.year, this.month.month, 1)
    this.focusTime = 0
  }

  private daysWithSlots(slots: ReadonlyArray<Slot>, month: YearMonth): Set<string> {
    const prefix = civil(month.year, month.month, 1).slice(0, 8)
    const days = new Set<string>()
    for (const slot of slots) {
      const key = this.dayOf(slot)
      if (key.startsWith(prefix)) days.add(key)
    }
    return days
  }

  /** The day's free starts, one per start (the first staff member's when "anyone"). */
  private slotsOn(day: string): Array<Slot> {
    const seen = new Set<string>()
    const out: Array<Slot> = []
    for (const slot of this.monthSlots ?? []) {
      if (seen.has(slot.start) || this.dayOf(slot) !== day) continue
      seen.add(slot.start)
      out.push(slot)
    }
    return out.sort((a, b) => a.start.localeCompare(b.start))
  }

  private async pickSlot(slot: Slot): Promise<void> {
    if (this.busy !== undefined) return // a hold is already on its way
    this.emit("slotwise:slot_selected", slot)
    this.problem = undefined
    this.notice = undefined
    this.busy = this.t("holding", { time: this.formatTime(slot.start) })
    this.render()
    this.announce(this.busy)
    const previous = this.hold
    try {
      this.hold = await this.client.hold({ service_id: this.service!.id, staff_id: slot.staff_id, start: slot.start, ttl_seconds: HOLD_SECONDS })
      this.slot = slot
      this.alternatives = []
      if (previous !== undefined && previous.id !== this.hold.id) this.releaseHold(previous)
      this.go("details")
    } catch (error) {
      if (error instanceof ApiError && error.status === 409) return this.taken(error)
      return this.fail(error, () => void this.pickSlot(slot))
    }
  }

  /** The time went to someone else: fresh slots, and the API's alternatives as choices. */
  private async taken(error: ApiError): Promise<void> {
    this.alternatives = error.alternatives
    this.notice = this.alternatives.length > 0 ? this.t("taken") : this.t("taken_none")
    this.emit("slotwise:error", { code: error.code, message: this.notice })
    this.hold = undefined
    this.slot = undefined
    this.slotCache.clear()
    try {
      this.monthSlots = await this.slotsFor(this.service!.id, this.staffParam(), this.month)
    } catch {
      // the alternatives still stand
    }
    if (this.day !== undefined && this.slotsOn(this.day).length === 0) this.pickFirstDay()
    this.go("date", ".notice")
    this.announce(this.notice)
  }

  private releaseHold(hold: Hold | undefined = this.hold): void {
    if (hold === undefined || this.client === undefined) return
    if (hold === this.hold) this.hold = undefined
    // Not tied to the widget's abort signal: it must go out on destroy too.
    void fetch(`${(this.options.base_url ?? this.defaultBase).replace(/\/+$/, "")}/v1/availability/holds/${hold.id}`, {
      method: "DELETE",
      headers: { authorization: `Bearer ${this.options.key}` },
      credentials: "omit",
      keepalive: true
    }).catch(() => undefined)
  }

  // ---------------------------------------------------------------- booking

  private validate(): boolean {
    const errors: Partial<Record<Field, string>> = {}
    if (this.fields.name.trim() === "") errors.name = this.t("name_missing")
    if (!EMAIL.test(this.fields.email.trim())) errors.email = this.t("email_invalid")
    if (this.fields.phone.trim() !== "" && !PHONE.test(this.fields.phone.trim())) errors.phone = this.t("phone_invalid")
    this.fieldErrors = errors
    return Object.keys(errors).length === 0
  }

  private async submit(): Promise<void> {
    if (this.busy !== undefined) return
    if (!this.validate()) {
      this.problem = { code: "validation_failed", message: this.t("fix_fields") }
      const first = (["name", "email", "phone"] as const).find((f) => this.fieldErrors[f] !== undefined)
      this.focusAfter = `#f-${first}`
      this.render()
      this.announce(this.t("fix_fields"))
      return
    }
    this.problem = undefined
    this.busy = this.t("booking")
    this.render()
    this.announce(this.busy)
    await this.book(true)
  }

  private async book(withHold: boolean): Promise<void> {
    const slot = this.slot!
    const f = this.fields
    const client: Record<string, string> = { name: f.name.trim(), email: f.email.trim(), time_zone: this.zone }
    if (f.phone.trim() !== "") client.phone = f.phone.trim()
    const body: Record<string, unknown> = { service_id: this.service!.id, staff_id: slot.staff_id, start: slot.start, client }
    if (f.notes.trim() !== "") body.notes = f.notes.trim()
    if (withHold && this.hold !== undefined) body.hold_id = this.hold.id
    try {
      this.booking = await this.client.book(body, `${this.bookingKey}-${withHold ? "h" : "d"}`)
    } catch (error) {
      // The key is reused only to retry a request that may not have arrived; an answered one
      // is settled (an idempotency key with another body would be refused).
      if (!(error instanceof ApiError) || error.status !== 0) this.bookingKey = newId()
      if (error instanceof ApiError) {
        // The hold lapsed while the visitor typed: book the same time directly if it is still free.
        const holdGone = error.code === "hold_expired" ||
          (error.status === 422 && JSON.stringify(error.problem.errors ?? "").includes("hold_id"))
        if (withHold && holdGone) return this.book(false)
        if (error.status === 409) return this.taken(error)
        if (error.status === 422 && Array.isArray(error.problem.errors)) {
          for (const item of error.problem.errors as Array<{ path?: string; message?: string }>) {
            const field = item.path?.replace(/^client\./, "") as Field | undefined
            if (field !== undefined && field in this.fields) this.fieldErrors[field] = item.message ?? ""
          }
        }
      }
      return this.fail(error, () => void this.book(withHold))
    }
    this.hold = undefined
    this.bookingKey = newId()
    this.emit("slotwise:booking_created", this.booking)
    this.go("done")
  }

  // ---------------------------------------------------------------- formatting

  /** Intl formatters are costly to build (tens of µs each) and a calendar needs dozens: kept per options. */
  private readonly formats = new Map<string, Intl.DateTimeFormat>()
  private fmt(options: Intl.DateTimeFormatOptions): Intl.DateTimeFormat {
    const key = `${this.intl}|${JSON.stringify(options)}`
    let format = this.formats.get(key)
    if (format === undefined) {
      format = new Intl.DateTimeFormat(this.intl, options)
      this.formats.set(key, format)
    }
    return format
  }

  /** The local day of each slot in the current zone, computed once per slot list and zone. */
  private dayIndex: { slots: ReadonlyArray<Slot>; zone: string; days: Map<string, string> } | undefined
  private dayOf(slot: Slot): string {
    if (this.dayIndex === undefined || this.dayIndex.slots !== this.monthSlots || this.dayIndex.zone !== this.zone) {
      this.dayIndex = { slots: this.monthSlots ?? [], zone: this.zone, days: new Map() }
    }
    let day = this.dayIndex.days.get(slot.start)
    if (day === undefined) {
      day = dateKey(Date.parse(slot.start), this.zone)
      this.dayIndex.days.set(slot.start, day)
    }
    return day
  }

  private formatTime(iso: string): string {
    // 24-hour locales write 04:00, 12-hour ones 4:00 AM.
    const h12 = this.fmt({ hour: "numeric" }).resolvedOptions().hour12 === true
    return this.fmt({ timeZone: this.zone, hour: h12 ? "numeric" : "2-digit", minute: "2-digit" }).format(Date.parse(iso))
  }

  private formatDay(key: string, weekdayStyle: "long" | "short" = "long"): string {
    return this.fmt({ timeZone: "UTC", weekday: weekdayStyle, year: "numeric", month: "long", day: "numeric" })
      .format(Date.parse(`${key}T12:00:00Z`))
  }

  private formatSlot(slot: Slot): string {
    return this.fmt({
      timeZone: this.zone,
      weekday: "short",
      month: "short",
      day: "numeric",
      hour: "numeric",
      minute: "2-digit"
    }).format(Date.parse(slot.start))
  }

  private monthLabel(): string {
    return this.fmt({ timeZone: "UTC", month: "long", year: "numeric" })
      .format(Date.UTC(this.month.year, this.month.month - 1, 15))
  }

  private price(service: Service): string | undefined {
    if (service.price === null) return undefined
    try {
      const format = new Intl.NumberFormat(this.intl, { style: "currency", currency: service.price.currency })
      const digits = format.resolvedOptions().maximumFractionDigits ?? 2
      return format.format(service.price.amount / 10 ** digits)
    } catch {
      return undefined
    }
  }

  private firstWeekday(): number {
    return this.lang === "de" ? 1 : 0
  }

  // ---------------------------------------------------------------- rendering

  private render(): void {
    if (this.destroyed) return
    const active = this.root.activeElement as HTMLElement | null
    const activeKey = active?.getAttribute("data-focus") ?? undefined
    const view = this.view()
    this.body.replaceChildren(...view)
    const branding = this.config === undefined ? !this.options.hide_branding : this.config.branding_required || this.options.hide_branding !== true
    this.footer.replaceChildren(
      ...(branding ? [h("a", { href: "https://slotwise.dev", target: "_blank", rel: "noopener" }, this.t("branding"))] : [])
    )
    this.footer.hidden = !branding
    const target = this.focusAfter
    this.focusAfter = undefined
    if (target !== undefined) this.focus(target)
    else if (activeKey !== undefined) this.body.querySelector<HTMLElement>(`[data-focus="${activeKey}"]`)?.focus()
  }

  private header(title: string, back?: () => void, headingClass?: string): Array<Node> {
    const progress = this.progress()
    const top = h(
      "div",
      { class: "top" },
      h("span", { class: "muted" }, progress ?? ""),
      this.config?.environment === "sandbox" ? h("span", { class: "badge" }, this.t("test_mode")) : null
    )
    const nodes: Array<Node> = [top, h("h2", { tabindex: "-1", class: headingClass }, title)]
    if (this.busy !== undefined) nodes.push(h("p", { class: "muted", role: "status" }, this.busy))
    if (this.problem !== undefined && this.step !== "fatal") nodes.push(this.alert(this.problem))
    if (back !== undefined) {
      nodes.push(h("p", {}, h("button", { type: "button", class: "link", "data-focus": "back", onclick: back }, `← ${this.t("back")}`)))
    }
    return nodes
  }

  private alert(problem: Problem): HTMLElement {
    return h(
      "div",
      { class: "alert", role: "alert" },
      h("p", {}, problem.message),
      problem.retry === undefined ? null : h("p", {}, h("button", {
        type: "button",
        class: "secondary",
        "data-focus": "retry",
        onclick: () => {
          this.problem = undefined
          problem.retry!()
        }
      }, this.t("retry")))
    )
  }

  private view(): Array<Node> {
    switch (this.step) {
      case "loading":
        return [
          h("h2", { tabindex: "-1" }, this.t("loading")),
          ...(this.busy !== undefined && this.busy !== this.t("loading") ? [h("p", { class: "muted", role: "status" }, this.busy)] : []),
          ...(this.problem !== undefined ? [this.alert(this.problem)] : [])
        ]
      case "fatal":
        return [h("h2", { tabindex: "-1" }, this.t("error_heading")), h("div", { class: "alert", role: "alert" }, h("p", {}, this.problem?.message ?? ""))]
      case "service":
        return this.serviceView()
      case "staff":
        return this.staffView()
      case "date":
        return this.dateView()
      case "details":
        return this.detailsView()
      case "done":
        return this.doneView()
    }
  }

  private serviceView(): Array<Node> {
    return [
      ...this.header(this.t("service_heading")),
      h("ul", { class: "choices" }, this.services.map((service) =>
        h("li", {}, h("button", {
          type: "button",
          class: "choice",
          "data-focus": `svc-${service.id}`,
          "data-service": service.id,
          onclick: () => {
            this.service = service
            this.monthSlots = undefined
            this.staffList = []
            void this.afterService(true).catch((error) => this.fail(error, () => void this.afterService(true)))
          }
        }, h("span", {}, h("strong", {}, service.name), service.description ? h("span", { class: "muted" }, ` · ${service.description}`) : null),
          h("span", { class: "muted" }, [this.t("minutes", { n: service.duration_minutes }), this.price(service)].filter(Boolean).join(" · ")))))
      )
    ]
  }

  private backFromStaff(): (() => void) | undefined {
    return this.options.service === undefined ? () => this.go("service") : undefined
  }

  private staffView(): Array<Node> {
    const choose = (id: string) => () => {
      this.staffChoice = id
      this.monthSlots = undefined
      void this.enterDate(true).catch((error) => this.fail(error, choose(id)))
    }
    return [
      ...this.header(this.t("staff_heading"), this.backFromStaff()),
      h("ul", { class: "choices" },
        h("li", {}, h("button", { type: "button", class: "choice", "data-focus": "stf-any", "data-staff": ANY, onclick: choose(ANY) }, h("strong", {}, this.t("anyone")))),
        this.staffList.map((member) =>
          h("li", {}, h("button", { type: "button", class: "choice", "data-focus": `stf-${member.id}`, "data-staff": member.id, onclick: choose(member.id) }, member.name))))
    ]
  }

  private backFromDate(): (() => void) | undefined {
    if (this.stepsShown().includes("staff")) return () => this.go("staff")
    if (this.options.service === undefined) return () => this.go("service")
    return undefined
  }

  private dateView(): Array<Node> {
    const nodes = this.header(this.t("date_heading"), this.backFromDate())
    if (this.service !== undefined) {
      nodes.push(h("p", { class: "muted" }, `${this.service.name} · ${this.t("minutes", { n: this.service.duration_minutes })}`))
    }
    if (this.notice !== undefined) {
      nodes.push(h(
        "div",
        { class: "notice", role: "group", "aria-label": this.t("alternatives") },
        h("p", {}, this.notice),
        this.alternatives.length === 0 ? null : h("ul", { class: "choices" }, this.alternatives.map((slot, i) =>
          h("li", {}, h("button", {
            type: "button",
            class: "choice",
            "data-focus": `alt-${i}`,
            "data-alternative": slot.start,
            onclick: () => void this.pickSlot(slot)
          }, this.formatSlot(slot)))))
      ))
    }
    const zoneSelect = this.zoneSelect()
    nodes.push(h("label", { for: "tz" }, this.t("time_zone")), zoneSelect)
    nodes.push(h("div", { class: "layout" }, h("div", {}, this.calendar()), h("div", {}, this.timesView())))
    return nodes
  }

  /**
   * The zone picker: ~400 options, so built once and kept across renders, and filled only when
   * the visitor reaches it (focus comes before any key or click), off the path to first times.
   */
  private zonePicker: HTMLSelectElement | undefined
  private readonly fillZones = () => {
    const select = this.zonePicker
    if (select === undefined || select.options.length > 1) return
    select.replaceChildren(...timeZones(this.zone).map((zone) => h("option", { value: zone }, zone.replace(/_/g, " "))))
    select.value = this.zone
  }

  private zoneSelect(): HTMLSelectElement {
    const fill = this.fillZones
    this.zonePicker ??= h("select", {
      id: "tz",
      "data-focus": "tz",
      onfocus: fill,
      onpointerdown: fill,
      onchange: (event: Event) => {
        const zone = (event.target as HTMLSelectElement).value
        if (!isTimeZone(zone)) return
        this.zone = zone
        // Keep the chosen day when it still has times in the new zone.
        if (this.day === undefined || this.slotsOn(this.day).length === 0) this.pickFirstDay()
        this.focusAfter = "#tz"
        this.render()
        this.announce(`${this.t("time_zone")}: ${zone}`)
      }
    })
    if (this.zonePicker.options.length <= 1) {
      this.zonePicker.replaceChildren(h("option", { value: this.zone }, this.zone.replace(/_/g, " ")))
    }
    this.zonePicker.value = this.zone
    return this.zonePicker
  }

  private calendar(): Array<Node> {
    const month = this.month
    const days = this.daysWithSlots(this.monthSlots ?? [], month)
    const today = dateKey(Date.now(), this.zone)
    const first = civil(month.year, month.month, 1)
    const last = civil(month.year, month.month, daysInMonth(month))
    const currentMonth = monthOf(today)
    const atStart = month.year * 12 + month.month <= currentMonth.year * 12 + currentMonth.month
    let focusDay = this.focusDay !== undefined && this.focusDay >= first && this.focusDay <= last ? this.focusDay : (this.day ?? first)
    if (focusDay < first || focusDay > last) focusDay = first
    const offset = (weekday(first) - this.firstWeekday() + 7) % 7
    const headers: Array<Node> = []
    for (let i = 0; i < 7; i++) {
      const sample = addDays("2027-03-07", this.firstWeekday() + i) // a Sunday, then onwards
      const date = Date.parse(`${sample}T12:00:00Z`)
      headers.push(h("th", { scope: "col", abbr: this.fmt({ timeZone: "UTC", weekday: "long" }).format(date) },
        this.fmt({ timeZone: "UTC", weekday: "short" }).format(date)))
    }
    const rows: Array<Node> = []
    let cells: Array<Node> = []
    for (let i = 0; i < offset; i++) cells.push(h("td", {}))
    for (let d = 1; d <= daysInMonth(month); d++) {
      const key = civil(month.year, month.month, d)
      const free = days.has(key)
      cells.push(h("td", { "aria-selected": key === this.day ? "true" : "false" }, h("button", {
        type: "button",
        class: `day${free ? " free" : ""}${key === today ? " today" : ""}`,
        tabindex: key === focusDay ? "0" : "-1",
        "data-day": key,
        "data-focus": `day-${key}`,
        "aria-disabled": free ? null : "true",
        "aria-current": key === today ? "date" : null,
        "aria-label": `${this.formatDay(key)}, ${free ? this.t("times_available") : this.t("no_times_day")}`,
        onclick: () => {
          this.focusDay = key
          if (!free) return
          this.day = key
          this.focusTime = 0
          this.notice = undefined
          this.focusAfter = `[data-day="${key}"]`
          this.render()
          this.announce(this.t("times_count", { n: this.slotsOn(key).length, date: this.formatDay(key) }))
        }
      }, String(d))))
      if (cells.length === 7) {
        rows.push(h("tr", {}, cells))
        cells = []
      }
    }
    if (cells.length > 0) {
      while (cells.length < 7) cells.push(h("td", {}))
      rows.push(h("tr", {}, cells))
    }
    const label = this.monthLabel()
    const table = h("table", { role: "grid", "aria-labelledby": "month", onkeydown: (e: KeyboardEvent) => this.calendarKey(e, focusDay) },
      h("thead", {}, h("tr", {}, headers)), h("tbody", {}, rows))
    return [
      h("div", { class: "calhead" },
        h("button", {
          type: "button",
          class: "nav",
          "data-focus": "prev",
          "aria-label": this.t("previous_month"),
          "aria-disabled": atStart ? "true" : null,
          onclick: () => atStart ? undefined : void this.showMonth(addMonths(month, -1))
        }, "‹"),
        h("strong", { id: "month", tabindex: "-1" }, label),
        h("button", { type: "button", class: "nav", "data-focus": "next", "aria-label": this.t("next_month"), onclick: () => void this.showMonth(addMonths(month, 1)) }, "›")),
      table,
      ...(this.monthSlots !== undefined && days.size === 0 ? [h("p", { class: "muted" }, this.t("no_times_month"))] : [])
    ]
  }

  private calendarKey(event: KeyboardEvent, from: string): void {
    const target = event.target as HTMLElement
    const current = target.getAttribute("data-day") ?? from
    const weekStart = (weekday(current) - this.firstWeekday() + 7) % 7
    const moves: Record<string, () => string> = {
      ArrowLeft: () => addDays(current, -1),
      ArrowRight: () => addDays(current, 1),
      ArrowUp: () => addDays(current, -7),
      ArrowDown: () => addDays(current, 7),
      Home: () => addDays(current, -weekStart),
      End: () => addDays(current, 6 - weekStart),
      PageUp: () => {
        const m = addMonths(monthOf(current), -1)
        return civil(m.year, m.month, Math.min(Number(current.slice(8)), daysInMonth(m)))
      },
      PageDown: () => {
        const m = addMonths(monthOf(current), 1)
        return civil(m.year, m.month, Math.min(Number(current.slice(8)), daysInMonth(m)))
      }
    }
    const move = moves[event.key]
    if (move === undefined) return
    event.preventDefault()
    const next = move()
    const today = dateKey(Date.now(), this.zone)
    const nextMonth = monthOf(next)
    const todayMonth = monthOf(today)
    if (nextMonth.year * 12 + nextMonth.month < todayMonth.year * 12 + todayMonth.month) return
    if (nextMonth.year !== this.month.year || nextMonth.month !== this.month.month) {
      void this.showMonth(nextMonth, next)
      return
    }
    this.focusDay = next
    this.focusAfter = `[data-day="${next}"]`
    this.render()
  }

  private timesView(): Array<Node> {
    if (this.day === undefined) return this.monthSlots === undefined ? [] : [h("p", { class: "muted" }, this.t("choose_day"))]
    const slots = this.slotsOn(this.day)
    const focusIndex = Math.min(this.focusTime, Math.max(0, slots.length - 1))
    return [
      h("h3", { id: "times-label" }, this.t("times_for", { date: this.formatDay(this.day) })),
      h("div", {
        class: "times",
        role: "group",
        "aria-labelledby": "times-label",
        onkeydown: (e: KeyboardEvent) => this.timesKey(e, slots.length)
      }, slots.map((slot, i) =>
        h("button", {
          type: "button",
          class: "time",
          tabindex: i === focusIndex ? "0" : "-1",
          "data-start": slot.start,
          "data-index": String(i),
          "data-focus": `time-${slot.start}`,
          onclick: () => {
            this.focusTime = i
            void this.pickSlot(slot)
          }
        }, this.formatTime(slot.start))))
    ]
  }

  private timesKey(event: KeyboardEvent, count: number): void {
    const target = event.target as HTMLElement
    const index = Number(target.getAttribute("data-index") ?? 0)
    const buttons = Array.from(this.body.querySelectorAll<HTMLElement>(".time"))
    // Columns as laid out now: the buttons on the first button's row.
    const columns = Math.max(1, buttons.filter((b) => b.offsetTop === buttons[0]?.offsetTop).length)
    const moves: Record<string, number> = {
      ArrowLeft: index - 1,
      ArrowRight: index + 1,
      ArrowUp: index - columns,
      ArrowDown: index + columns,
      Home: 0,
      End: count - 1
    }
    const next = moves[event.key]
    if (next === undefined) return
    event.preventDefault()
    if (next < 0 || next >= count) return
    this.focusTime = next
    for (const button of buttons) button.setAttribute("tabindex", button === buttons[next] ? "0" : "-1")
    buttons[next]?.focus()
  }

  private detailsView(): Array<Node> {
    const slot = this.slot!
    const nodes = this.header(this.t("details_heading"), () => {
      this.releaseHold()
      this.slot = undefined
      this.problem = undefined
      this.go("date")
    })
    const day = dateKey(Date.parse(slot.start), this.zone)
    nodes.push(h("div", { class: "summary" },
      h("p", {}, h("strong", {}, this.service!.name)),
      h("p", {}, `${this.formatDay(day)}, ${this.formatTime(slot.start)} (${this.zone.replace(/_/g, " ")})`),
      h("p", { class: "muted" }, this.t("held_until", { n: HOLD_SECONDS / 60 }))))
    const field = (name: Field, type: string, autocomplete: string, required: boolean, multiline = false) => {
      const error = this.fieldErrors[name]
      const props: Props = {
        id: `f-${name}`,
        name,
        "data-focus": `f-${name}`,
        autocomplete,
        required,
        "aria-required": required ? "true" : null,
        "aria-invalid": error !== undefined ? "true" : null,
        "aria-describedby": error !== undefined ? `e-${name}` : null,
        value: this.fields[name],
        oninput: (event: Event) => {
          this.fields[name] = (event.target as HTMLInputElement).value
        }
      }
      if (!multiline) props.type = type
      return [
        h("label", { for: `f-${name}` }, this.t(name), required ? h("span", { "aria-hidden": "true" }, " *") : null),
        multiline ? h("textarea", props) : h("input", props),
        error === undefined ? null : h("p", { class: "field-error", id: `e-${name}` }, error)
      ]
    }
    nodes.push(h("form", {
      novalidate: true,
      onsubmit: (event: Event) => {
        event.preventDefault()
        void this.submit()
      }
    },
      field("name", "text", "name", true),
      field("email", "email", "email", true),
      field("phone", "tel", "tel", false),
      field("notes", "text", "off", false, true),
      h("div", { class: "actions" },
        h("button", { type: "submit", class: "primary", "data-focus": "book", "aria-disabled": this.busy !== undefined ? "true" : null }, this.busy === undefined ? this.t("book") : this.t("booking")))))
    return nodes
  }

  private doneView(): Array<Node> {
    const booking = this.booking!
    const service = this.service!
    const day = dateKey(Date.parse(booking.start), this.zone)
    if (this.blobUrl !== undefined) URL.revokeObjectURL(this.blobUrl)
    const account = this.config?.account_name ?? ""
    this.blobUrl = URL.createObjectURL(new Blob([ics({
      uid: `${booking.id}@slotwise`,
      start: booking.start,
      end: booking.end,
      stamp: new Date().toISOString(),
      summary: account === "" ? service.name : `${service.name} (${account})`,
      description: `Booking ${booking.id}`
    })], { type: "text/calendar" }))
    const pending = booking.status === "pending"
    const nodes: Array<Node | null> = [
      ...this.header(pending ? this.t("pending_heading") : this.t("done_heading"), undefined, pending ? undefined : "ok"),
      h("p", { "data-booking": booking.id }, this.t("confirmation", {
        service: service.name,
        date: this.formatDay(day),
        time: this.formatTime(booking.start),
        zone: this.zone.replace(/_/g, " ")
      })),
      pending ? h("p", { class: "muted" }, this.t("pending_note")) : null,
      h("div", { class: "actions" },
        h("a", { href: this.blobUrl, download: "booking.ics", class: "secondary", "data-focus": "ics" }, this.t("add_to_calendar")),
        h("button", {
          type: "button",
          class: "link",
          "data-focus": "again",
          onclick: () => {
            this.booking = undefined
            this.slot = undefined
            this.slotCache.clear()
            void this.enterDate(false).catch((error) => this.fail(error, () => void this.enterDate(false)))
          }
        }, this.t("book_another")))
    ]
    return nodes.filter((n): n is Node => n !== null)
  }
}
