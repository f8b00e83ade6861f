/** The widget's options: from `Slotwise.mount(element, options)` and from `data-*` attributes. */

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
  /** A manage link's token: the widget shows that booking to its client (cancel, move) instead of the booking flow. */
  readonly manage_token?: string | undefined
}

export interface WidgetHandle {
  update(options: WidgetOptions): void
  destroy(): void
}

/** The `staff` option that lets the API choose any free staff member. */
export const ANY = "any"

/** The visitor's details, in form order. */
export const FIELDS = ["name", "email", "phone", "notes"] as const
export type Field = typeof FIELDS[number]

/** Options that pick another account, service or staff member: changing one restarts the flow. */
export const RESTART_OPTIONS = ["key", "service", "staff", "base_url", "manage_token"] as const

/** Options from `data-*` attributes in kebab case (`data-primary-color`, `data-prefill-email`, …). */
export const optionsFromAttributes = (el: HTMLElement): WidgetOptions => {
  const d = el.dataset
  const prefill: Record<string, string> = {}
  for (const field of FIELDS) {
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
    hide_branding: d.hideBranding === undefined ? undefined : d.hideBranding !== "false",
    manage_token: d.manageToken
  }
  for (const name of Object.keys(options)) if (options[name] === undefined) delete options[name]
  return options as WidgetOptions
}
