/**
 * What the widget's parts (appearance, steps, calendar, times, hold, details, confirmation,
 * manage, …) may use of the mounted widget: each takes the members it names from this
 * interface, which `Widget` (widget.ts) implements. The parts import this module, never
 * widget.ts, so only the entry point depends on the widget and no part imports itself back.
 */
import type { Client, Slot } from "./api.js"
import type { WidgetOptions } from "./options.js"
import type { Action, State } from "./state.js"
import type { Lang, StringKey } from "./strings.js"
import type { YearMonth } from "./time.js"

export interface WidgetHost {
  /** The page's element the widget is mounted on: its events are dispatched there. */
  readonly host: HTMLElement
  readonly options: WidgetOptions
  readonly frame: HTMLDivElement
  readonly body: HTMLDivElement
  readonly probe: HTMLSpanElement
  readonly instanceSheet: CSSStyleSheet
  readonly media: MediaQueryList | undefined
  readonly client: Client
  lang: Lang
  intl: string
  readonly formats: Map<string, Intl.DateTimeFormat>
  blobUrl: string | undefined
  focusAfter: string | undefined
  zonePicker: HTMLSelectElement | undefined
  /** The flow: read here, changed only through `apply`. */
  readonly state: State
  readonly slotCache: Map<string, Promise<ReadonlyArray<Slot>>>
  /** The timer that renews the hold before it lapses. */
  renewal: ReturnType<typeof setTimeout> | undefined
  /** Staff names by id, for naming who was assigned or attends. */
  readonly staffNames: Map<string, string>
  /** The zone times are shown in (`Formatting`). */
  readonly zone: string

  t(key: StringKey, vars?: Record<string, string | number>): string
  /** The API's origin without a trailing slash. */
  baseUrl(): string
  /** A manage link that opens nothing: one message, whatever was wrong with it. */
  linkInvalid(): void
  /** After the service is known: the staff step, or straight to the calendar. */
  afterService(first: boolean): Promise<void>
  /** Runs a step of the flow; a failure offers to run it again. */
  run(task: () => Promise<void>): void
  /** Changes the state, nothing else: the caller renders when the change shows. */
  apply(action: Action): void
  /** Changes the state to another step: rendered, focus on its heading (or `focus`), and announced. */
  go(action: Action, focus?: string): void
  /** A failure during the flow: a retry for network trouble, a fatal message for bad configuration. */
  fail(error: unknown, retry: () => void): Promise<void>
  announce(text: string): void
  /** The chosen service's and staff member's slots in a month. */
  monthSlotsFor(month: YearMonth): Promise<ReadonlyArray<Slot>>
  enterDate(first: boolean): Promise<void>
  showMonth(month: YearMonth, focusDay?: string): Promise<void>
  render(): void
}
