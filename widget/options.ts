/**
 * The widget's options: from `Slotwise.mount(element, options)` and from `data-*` attributes.
 * One table says how each is read, from an attribute's text or a script's value; the
 * `WidgetOptions` type is derived from it, so the two cannot drift apart.
 */

/** The visitor's details, in form order. */
export const FIELDS = ["name", "email", "phone", "notes"] as const
export type Field = typeof FIELDS[number]

const text = (value: unknown): string | undefined => (typeof value === "string" ? value : undefined)

/** How each option is read; a value of another type is left out, as if not given. */
const OPTIONS = {
  key: text,
  service: text,
  /** A staff id, or `"any"` to skip the staff step. */
  staff: text,
  base_url: text,
  primary_color: text,
  font_family: text,
  radius: (value: unknown): string | number | undefined => (typeof value === "string" || typeof value === "number" ? value : undefined),
  theme: (
    value: unknown
  ): "light" | "dark" | "auto" | undefined => (value === "light" || value === "dark" || value === "auto" ? value : undefined),
  locale: text,
  /** As an attribute, present means true unless it says `"false"`. */
  hide_branding: (value: unknown): boolean | undefined =>
    typeof value === "boolean" ? value : typeof value === "string" ? value !== "false" : undefined,
  /** A manage link's token: the widget shows that booking to its client (cancel, move) instead of the booking flow. */
  manage_token: text
}

type OptionName = keyof typeof OPTIONS

/** The visitor's details to start the form with. */
export type Prefill = { readonly [F in Field]?: string | undefined }

export type WidgetOptions =
  & { readonly [K in OptionName]?: ReturnType<typeof OPTIONS[K]> }
  & { readonly prefill?: Prefill | undefined }

const NAMES = Object.keys(OPTIONS) as Array<OptionName>

/** `base_url` → `baseUrl`: the `dataset` key of `data-base-url`. */
const camel = (name: string): string => name.replace(/_(.)/g, (_, c: string) => c.toUpperCase())

const record = (value: unknown): Readonly<Record<string, unknown>> | undefined =>
  typeof value === "object" && value !== null ? value as Readonly<Record<string, unknown>> : undefined

/** The options `given` holds, each read by its rule; absent and unreadable ones left out. */
export const readOptions = (given: unknown): WidgetOptions => {
  const raw = record(given) ?? {}
  const options: Record<string, unknown> = {}
  for (const name of NAMES) {
    const value = OPTIONS[name](raw[name])
    if (value !== undefined) options[name] = value
  }
  const prefill = record(raw.prefill)
  if (prefill !== undefined) {
    const fields: Record<string, string> = {}
    for (const field of FIELDS) {
      const value = text(prefill[field])
      if (value !== undefined) fields[field] = value
    }
    options.prefill = fields
  }
  return options as WidgetOptions
}

/** Options from `data-*` attributes in kebab case (`data-primary-color`, `data-prefill-email`, …). */
export const optionsFromAttributes = (el: HTMLElement): WidgetOptions => {
  const d = el.dataset
  const raw: Record<string, unknown> = {}
  for (const name of NAMES) raw[name] = d[camel(name)]
  const prefill: Record<string, string | undefined> = {}
  for (const field of FIELDS) prefill[field] = d[camel(`prefill_${field}`)]
  return readOptions({ ...raw, prefill })
}

export interface WidgetHandle {
  update(options: WidgetOptions): void
  destroy(): void
}

/** The `staff` option that lets the API choose any free staff member. */
export const ANY = "any"

/** Options that pick another account, service or staff member: changing one restarts the flow. */
export const RESTART_OPTIONS = ["key", "service", "staff", "base_url", "manage_token"] as const
