/** The widget's language, locale and look (theme, colour, font, radius) from its options. */
import { langOf } from "./strings.js"
import { appearanceCss, contrast, luminance, safeColor, safeFont, safeRadius } from "./styles.js"
import type { WidgetHost } from "./host.js"

/** What this module reads of the widget, and how it reports back. */
type Host = Pick<WidgetHost, "frame" | "instanceSheet" | "intl" | "lang" | "media" | "options" | "probe" | "state">

const DEFAULT_PRIMARY = { light: "#2563eb", dark: "#93c5fd" }

export const applyAppearance = (w: Host): void => {
  const locale = w.options.locale ?? (typeof navigator === "undefined" ? "en" : navigator.language) ?? "en"
  w.lang = langOf(locale)
  let intl: string = w.lang
  try {
    const canonical = Intl.getCanonicalLocales(locale)[0]
    if (canonical !== undefined && langOf(canonical) === w.lang && canonical.toLowerCase().startsWith(w.lang)) intl = canonical
  } catch {
    // not a BCP 47 tag: the table's language
  }
  w.intl = intl
  const theme = w.options.theme === "dark" || (w.options.theme === "auto" && w.media?.matches === true) ? "dark" : "light"
  w.frame.setAttribute("data-theme", theme)
  w.frame.setAttribute("lang", w.intl)
  // The widget's own option wins over the account's branding, which wins over the default.
  const primary = safeColor(w.options.primary_color) ?? safeColor(w.state.config?.primary_color ?? undefined) ?? DEFAULT_PRIMARY[theme]
  const base = { primary, font: safeFont(w.options.font_family), radius: safeRadius(w.options.radius) }
  w.instanceSheet.replaceSync(appearanceCss({ ...base, onPrimary: "#fff", primaryLine: primary }))
  // The text on primary-coloured buttons: white or near-black, whichever contrasts more.
  const lum = w.probe.isConnected ? luminance(getComputedStyle(w.probe).color) : undefined
  if (lum !== undefined) {
    const onPrimary = contrast(lum, 1) >= contrast(lum, luminance("rgb(17,24,39)")!) ? "#fff" : "#111827"
    const bg = luminance(theme === "dark" ? "rgb(17,24,39)" : "rgb(255,255,255)")!
    // Time buttons are outlined in the primary colour when it contrasts enough with the background.
    const primaryLine = contrast(lum, bg) >= 3 ? primary : "var(--sw-line)"
    w.instanceSheet.replaceSync(appearanceCss({ ...base, onPrimary, primaryLine }))
  }
}
