/**
 * The hosted pages' HTML: server-rendered shells around the widget (which does all the
 * booking and managing), the service list, and the not-found page. Everything that comes from
 * an account or a request is escaped; the pages carry no inline script or style.
 */

export type PageLang = "en" | "de"
export type PageTheme = "light" | "dark" | undefined

const STRINGS = {
  en: {
    book_title: "Book with {account}",
    book_lead: "Choose a service to see free times.",
    book_service: "Book {service} with {account}",
    manage_title: "Your booking with {account}",
    manage_description: "See, move or cancel your booking with {account}.",
    no_services: "There is nothing to book yet.",
    minutes: "{n} min",
    not_found_title: "Page not found",
    not_found: "There is no booking page at this address.",
    link_invalid_title: "This link is no longer valid",
    link_invalid: "This link is no longer valid. Please use the most recent link you received, or contact the business.",
    too_many: "Too many requests",
    unavailable: "This page is unavailable right now. Please try again in a moment.",
    too_many_detail: "Please wait a moment and try again.",
    skip: "Skip to content",
    test_mode: "Test mode",
    all_services: "All services",
    powered: "Powered by Slotwise"
  },
  de: {
    book_title: "Termin bei {account} buchen",
    book_lead: "Wählen Sie eine Leistung, um freie Termine zu sehen.",
    book_service: "{service} bei {account} buchen",
    manage_title: "Ihre Buchung bei {account}",
    manage_description: "Buchung bei {account} ansehen, verschieben oder stornieren.",
    no_services: "Noch gibt es nichts zu buchen.",
    minutes: "{n} Min.",
    not_found_title: "Seite nicht gefunden",
    not_found: "Unter dieser Adresse gibt es keine Buchungsseite.",
    link_invalid_title: "Dieser Link ist nicht mehr gültig",
    link_invalid:
      "Dieser Link ist nicht mehr gültig. Bitte verwenden Sie den neuesten Link, den Sie erhalten haben, oder wenden Sie sich an das Unternehmen.",
    too_many: "Zu viele Anfragen",
    unavailable: "Diese Seite ist gerade nicht verfügbar. Bitte versuchen Sie es gleich noch einmal.",
    too_many_detail: "Bitte warten Sie einen Moment und versuchen Sie es erneut.",
    skip: "Zum Inhalt springen",
    test_mode: "Testmodus",
    all_services: "Alle Leistungen",
    powered: "Bereitgestellt von Slotwise"
  }
} as const

export type PageStringKey = keyof (typeof STRINGS)["en"]

export const pageText = (lang: PageLang, key: PageStringKey, vars: Record<string, string | number> = {}): string =>
  STRINGS[lang][key].replace(/\{(\w+)\}/g, (_, name: string) => String(vars[name] ?? ""))

const ESCAPES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", "\"": "&quot;", "'": "&#39;" }
export const escapeHtml = (text: string): string => text.replace(/[&<>"']/g, (c) => ESCAPES[c]!)

/** `en` or `de` from `Accept-Language`, by quality then order; English when neither is asked for. */
export const langOfAcceptLanguage = (header: string | undefined): PageLang => {
  const ranked = (header ?? "").split(",").map((part, index) => {
    const [tag = "", ...params] = part.trim().split(";")
    const q = params.map((p) => /^\s*q=([0-9.]+)\s*$/.exec(p)?.[1]).find((v) => v !== undefined)
    return { base: tag.trim().toLowerCase().split("-")[0] ?? "", q: q === undefined ? 1 : Number(q), index }
  }).filter((entry) => entry.q > 0 && (entry.base === "en" || entry.base === "de"))
  ranked.sort((a, b) => b.q - a.q || a.index - b.index)
  return (ranked[0]?.base as PageLang | undefined) ?? "en"
}

export const themeOf = (value: string | null): PageTheme => (value === "light" || value === "dark" ? value : undefined)

export interface Shell {
  readonly lang: PageLang
  readonly theme: PageTheme
  readonly title: string
  readonly description: string
  /** The page's absolute URL (`og:url`). */
  readonly url: string
  /** The account's name as shown in the header; absent on pages that name no account. */
  readonly account?: string | undefined
  readonly logoUrl?: string | undefined
  readonly poweredBy: boolean
  /** Pages that must not be indexed: manage pages (a token in the URL), sandbox pages. */
  readonly noindex: boolean
  /** Where the page's assets and the API are (`""`, or a mount prefix). */
  readonly prefix: string
  readonly body: string
  readonly widget: boolean
}

export const shell = (page: Shell): string => {
  const t = (key: PageStringKey) => escapeHtml(pageText(page.lang, key))
  const meta = (property: string, content: string) => `<meta property="${property}" content="${escapeHtml(content)}">`
  return `<!doctype html>
<html lang="${page.lang}"${page.theme === undefined ? "" : ` data-theme="${page.theme}"`}>
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(page.title)}</title>
<meta name="description" content="${escapeHtml(page.description)}">
${meta("og:title", page.title)}
${meta("og:description", page.description)}
${meta("og:url", page.url)}
${meta("og:type", "website")}
${page.account === undefined ? "" : meta("og:site_name", page.account)}
${page.noindex ? `<meta name="robots" content="noindex, nofollow">\n` : ""}<meta name="color-scheme" content="${
    page.theme ?? "light dark"
  }">
<link rel="stylesheet" href="${page.prefix}/pages.css">
${page.widget ? `<script src="${page.prefix}/widget.js" defer></script>\n` : ""}</head>
<body>
<a class="skip" href="#main">${t("skip")}</a>
${
    page.account === undefined
      ? ""
      : `<header>${page.logoUrl === undefined ? "" : `<img src="${escapeHtml(page.logoUrl)}" alt="">`}<p class="account">${
        escapeHtml(page.account)
      }</p></header>\n`
  }<main id="main">
${page.body}
</main>
${page.poweredBy ? `<footer><a href="https://slotwise.dev" rel="noopener">${t("powered")}</a></footer>\n` : ""}</body>
</html>
`
}

/** The widget's element: the page's key, and the flow's or manage link's settings. */
export const widgetElement = (attributes: Record<string, string | undefined>): string =>
  `<div data-slotwise-widget${
    Object.entries(attributes).filter((e): e is [string, string] => e[1] !== undefined).map(([name, value]) =>
      ` data-${name}="${escapeHtml(value)}"`
    ).join("")
  }></div>`
