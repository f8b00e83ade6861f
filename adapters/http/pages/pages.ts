/**
 * The hosted pages, answered in front of the API pipeline like `/widget.js`:
 *
 * - `GET /book/{handle}`: the account's active services, each linking to its booking page;
 *   a handle the account gave up within the hold period redirects to its handle's page;
 * - `GET /book/{handle}/{service_id}`: the booking flow (the widget with that service);
 * - `/book/{handle}/sandbox[/{service_id}]`: the same for the account's sandbox;
 * - `GET /manage/{token}`: the manage page (the widget in manage mode);
 * - `GET /`: on a verified custom domain the account's `/book/{handle}` page, else the
 *   server's root document;
 * - `GET /pages.css`: their style sheet.
 *
 * Pages embed the hosted pages' publishable key of the environment (src/hostedPages/HostedPages.ts); it is
 * accepted only from pages this server serves. Every page is counted per client address like
 * an anonymous API request, and carries a CSP without `'unsafe-inline'`.
 */
import { type HttpApp, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Effect, Option } from "effect"
import { createHash } from "node:crypto"
import { Accounts } from "../../../src/accounts/Accounts.js"
import { type Account, showsPoweredBy } from "../../../src/accounts/account.js"
import { Domains } from "../../../src/domains/Domains.js"
import { HostedPageKeys } from "../../../src/hostedPages/HostedPages.js"
import { Manage } from "../../../src/manage/Manage.js"
import type { TenantId } from "../../../src/ports/tenant.js"
import { Tenant } from "../../../src/ports/tenant.js"
import { withoutTrailingSlash } from "../../../src/ports/trailingSlash.js"
import { policyForAddress } from "../../../src/ratelimit/policy.js"
import { RateLimiter } from "../../../src/ratelimit/RateLimiter.js"
import { Services } from "../../../src/services/Services.js"
import { VERSION } from "../api.js"
import { makeHostTenant, requestHost } from "../hostRouting.js"
import { clientAddress } from "../clientAddress.js"
import { PAGES_CSS } from "./css.js"
import { escapeHtml, langOfAcceptLanguage, type PageLang, pageText, shell, type Shell, themeOf, widgetElement } from "./html.js"

export const PAGES_CSS_PATH = "/pages.css"

/** Headers of every page: nothing inline runs, nothing frames it, no token leaves in a Referer. */
export const PAGE_SECURITY_HEADERS = {
  "content-security-policy":
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' https:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  "x-frame-options": "DENY",
  "referrer-policy": "no-referrer",
  "x-content-type-options": "nosniff",
  vary: "Accept-Language"
}

const CSS_ETAG = `"${createHash("sha256").update(PAGES_CSS).digest("base64url").slice(0, 22)}"`

/** What `GET /` answers off a custom domain: where the API's reference, document and health check are. */
const ROOT_DOCUMENT = JSON.stringify({ name: "slotwise", version: VERSION, docs: "/docs", openapi: "/v1/openapi.json", health: "/health" })

const rootResponse = (request: HttpServerRequest.HttpServerRequest) =>
  /\btext\/html\b/.test(request.headers.accept ?? "")
    ? HttpServerResponse.empty({ status: 302, headers: { location: "/docs" } })
    : HttpServerResponse.text(ROOT_DOCUMENT, { contentType: "application/json", headers: { vary: "Accept" } })

const cssResponse = (request: HttpServerRequest.HttpServerRequest) => {
  const headers = { etag: CSS_ETAG, "cache-control": "public, max-age=300", "x-content-type-options": "nosniff" }
  const match = request.headers["if-none-match"]
  if (match !== undefined && match.split(",").some((tag) => tag.trim().replace(/^W\//, "") === CSS_ETAG)) {
    return HttpServerResponse.empty({ status: 304, headers })
  }
  return HttpServerResponse.text(PAGES_CSS, { contentType: "text/css; charset=utf-8", headers })
}

export interface PagesOptions {
  readonly prefix?: string | undefined
  readonly trustProxy?: boolean | undefined
}

/** A request for a page, as the routes below see it. */
interface PageRequest {
  readonly lang: PageLang
  readonly theme: ReturnType<typeof themeOf>
  readonly prefix: string
}

type Route =
  | { readonly _tag: "Book"; readonly handle: string; readonly sandbox: boolean; readonly serviceId: string | undefined }
  | { readonly _tag: "Manage"; readonly token: string }

const SEGMENT = /^[A-Za-z0-9_.~-]{1,200}$/

/** The page a path names, or none. */
export const routeOf = (path: string): Route | undefined => {
  const parts = withoutTrailingSlash(path).split("/").slice(1).map((p) => {
    try {
      return decodeURIComponent(p)
    } catch {
      return ""
    }
  })
  if (!parts.every((p) => SEGMENT.test(p))) return undefined
  if (parts[0] === "manage" && parts.length === 2) return { _tag: "Manage", token: parts[1]! }
  if (parts[0] !== "book" || parts.length < 2 || parts.length > 4) return undefined
  const sandbox = parts[2] === "sandbox"
  const rest = parts.slice(sandbox ? 3 : 2)
  if (rest.length > 1) return undefined
  return { _tag: "Book", handle: parts[1]!, sandbox, serviceId: rest[0] }
}

const priceOf = (lang: PageLang, price: { readonly amount: number; readonly currency: string } | null): string | undefined => {
  if (price === null) return undefined
  try {
    const format = new Intl.NumberFormat(lang, { style: "currency", currency: price.currency })
    return format.format(price.amount / 10 ** (format.resolvedOptions().maximumFractionDigits ?? 2))
  } catch {
    return undefined
  }
}

export const makePages = (options: PagesOptions = {}) =>
  Effect.gen(function*() {
    const accounts = yield* Accounts
    const services = yield* Services
    const manage = yield* Manage
    const keys = yield* HostedPageKeys
    const limiter = yield* RateLimiter
    const domains = Option.getOrUndefined(yield* Effect.serviceOption(Domains))
    const trustProxy = options.trustProxy === true
    const prefix = withoutTrailingSlash(options.prefix ?? "")
    const hostTenant = domains === undefined ? undefined : makeHostTenant(domains, trustProxy)

    const page = (status: number, html: string, extra: Record<string, string> = {}) =>
      HttpServerResponse.text(html, {
        status,
        contentType: "text/html; charset=utf-8",
        headers: { ...PAGE_SECURITY_HEADERS, "cache-control": "no-cache", ...extra }
      })

    const plainShell = (req: PageRequest, fields: Pick<Shell, "title" | "description" | "url" | "body"> & Partial<Shell>): string =>
      shell({ lang: req.lang, theme: req.theme, prefix: req.prefix, poweredBy: true, noindex: true, widget: false, ...fields })

    const notFound = (req: PageRequest, url: string, invalidLink = false) => {
      const title = pageText(req.lang, invalidLink ? "link_invalid_title" : "not_found_title")
      const detail = pageText(req.lang, invalidLink ? "link_invalid" : "not_found")
      return page(
        404,
        plainShell(req, { title, description: detail, url, body: `<h1>${escapeHtml(title)}</h1>\n<p>${escapeHtml(detail)}</p>` }),
        {
          "cache-control": "no-store"
        }
      )
    }

    const displayName = (account: Account): string => account.branding.display_name ?? account.name

    /** What every page of the account shows: its name, logo and whether "Powered by Slotwise" does. */
    const brandingOf = (account: Account) => ({
      account: displayName(account),
      logoUrl: account.branding.logo_url ?? undefined,
      poweredBy: showsPoweredBy(account)
    })

    /** The widget's settings from the account's branding (a free plan's widget shows "Powered by" anyway). */
    const widgetBranding = (account: Account) => ({
      "primary-color": account.branding.primary_color ?? undefined,
      "hide-branding": showsPoweredBy(account) ? undefined : "true"
    })

    /** A page around the widget in the account's branding; the widget says "Powered by" itself. */
    const widgetShell = (
      req: PageRequest,
      account: Account,
      fields: Pick<Shell, "title" | "description" | "url" | "noindex"> & {
        readonly heading: string
        readonly widget: Record<string, string>
      }
    ) =>
      shell({
        lang: req.lang,
        theme: req.theme,
        prefix: req.prefix,
        title: fields.title,
        description: fields.description,
        url: fields.url,
        ...brandingOf(account),
        poweredBy: false,
        noindex: fields.noindex,
        widget: true,
        body: `${fields.heading}\n${
          widgetElement({
            ...fields.widget,
            theme: req.theme ?? "auto",
            locale: req.lang,
            "base-url": req.prefix || undefined,
            ...widgetBranding(account)
          })
        }`
      })

    const bookPath = (account: Account, tenant: TenantId, serviceId?: string) =>
      `${prefix}/book/${encodeURIComponent(account.handle)}${tenant.environment === "sandbox" ? "/sandbox" : ""}${
        serviceId === undefined ? "" : `/${encodeURIComponent(serviceId)}`
      }`

    const bookable = (tenant: TenantId) =>
      Effect.map(
        Effect.provideService(services.list({ limit: 100 }), Tenant, tenant),
        (result) => result.data.filter((s) => s.active && s.staff_ids.length > 0)
      )

    const serviceList = (req: PageRequest, account: Account, tenant: TenantId, url: string) =>
      Effect.map(bookable(tenant), (list) => {
        const name = displayName(account)
        const title = pageText(req.lang, "book_title", { account: name })
        const items = list.map((s) => {
          const meta = [pageText(req.lang, "minutes", { n: s.duration_minutes }), priceOf(req.lang, s.price)].filter(Boolean).join(" · ")
          return `<li><a href="${escapeHtml(bookPath(account, tenant, s.id))}" data-service="${
            escapeHtml(s.id)
          }"><span><span class="name">${escapeHtml(s.name)}</span>${
            s.description ? `<span class="description">${escapeHtml(s.description)}</span>` : ""
          }</span><span class="meta">${escapeHtml(meta)}</span></a></li>`
        })
        const badge = tenant.environment === "sandbox" ? ` <span class="badge">${escapeHtml(pageText(req.lang, "test_mode"))}</span>` : ""
        const body = `<h1>${escapeHtml(title)}${badge}</h1>\n<p class="lead">${escapeHtml(pageText(req.lang, "book_lead"))}</p>\n` +
          (items.length === 0
            ? `<p class="card">${escapeHtml(pageText(req.lang, "no_services"))}</p>`
            : `<ul class="services">${items.join("")}</ul>`)
        return page(
          200,
          plainShell(req, {
            title,
            description: list.map((s) => s.name).join(", ") || pageText(req.lang, "no_services"),
            url,
            ...brandingOf(account),
            noindex: tenant.environment === "sandbox",
            body
          })
        )
      })

    const servicePage = (req: PageRequest, account: Account, tenant: TenantId, serviceId: string, url: string) =>
      Effect.gen(function*() {
        const service = (yield* bookable(tenant)).find((s) => s.id === serviceId)
        if (service === undefined) return notFound(req, url)
        const key = yield* keys.keyFor(tenant)
        const name = displayName(account)
        const title = pageText(req.lang, "book_service", { service: service.name, account: name })
        const back = `<p><a href="${escapeHtml(bookPath(account, tenant))}">← ${escapeHtml(pageText(req.lang, "all_services"))}</a></p>`
        return page(
          200,
          widgetShell(req, account, {
            title,
            description: service.description ?? `${service.name} · ${pageText(req.lang, "minutes", { n: service.duration_minutes })}`,
            url,
            noindex: tenant.environment === "sandbox",
            heading: `${back}\n<h1>${escapeHtml(title)}</h1>`,
            widget: { key, service: service.id }
          })
        )
      })

    const managePage = (req: PageRequest, token: string, url: string) =>
      Effect.gen(function*() {
        const opened = yield* Effect.option(manage.open(token))
        if (Option.isNone(opened)) return notFound(req, url, true)
        const view = yield* manage.get(token)
        const account = yield* accounts.get(opened.value.tenant.account_id)
        const name = displayName(account)
        const title = `${view.service.name} · ${pageText(req.lang, "manage_title", { account: name })}`
        return page(
          200,
          widgetShell(req, account, {
            title,
            description: pageText(req.lang, "manage_description", { account: name }),
            url,
            noindex: true,
            heading: `<h1>${escapeHtml(pageText(req.lang, "manage_title", { account: name }))}</h1>`,
            widget: { "manage-token": token }
          }),
          { "cache-control": "no-store" }
        )
      })

    /**
     * The same page under the account's handle: 308, kept out of caches because the hold ends
     * and the former owner may take the handle back.
     */
    const movedPage = (route: Extract<Route, { _tag: "Book" }>, handle: string, query: string) => {
      const rest = [handle, ...(route.sandbox ? ["sandbox"] : []), ...(route.serviceId === undefined ? [] : [route.serviceId])]
      const location = `${prefix}/book/${rest.map(encodeURIComponent).join("/")}${query === "" ? "" : `?${query}`}`
      return HttpServerResponse.empty({ status: 308, headers: { location, "cache-control": "no-store" } })
    }

    const bookPage = (req: PageRequest, route: Extract<Route, { _tag: "Book" }>, path: string, query: string) =>
      Effect.gen(function*() {
        const found = yield* accounts.byHandle(route.handle)
        if (Option.isNone(found)) {
          const moved = yield* accounts.movedTo(route.handle)
          return Option.isSome(moved) ? movedPage(route, moved.value, query) : notFound(req, path)
        }
        const account = found.value
        const tenant: TenantId = { account_id: account.id, environment: route.sandbox ? "sandbox" : "production" }
        const url = (yield* manage.publicBase(tenant)) + path.slice(prefix.length)
        return yield* (route.serviceId === undefined
          ? serviceList(req, account, tenant, url)
          : servicePage(req, account, tenant, route.serviceId, url))
      })

    /** `GET /` on a verified custom domain: the owner's service list. */
    const domainRoot = (req: PageRequest, tenant: TenantId, host: string) =>
      Effect.flatMap(accounts.get(tenant.account_id), (account) => serviceList(req, account, tenant, `https://${host}/`))

    /** Counts a page request by client address: the refusal when its quota is spent. */
    const refusalOfCount = (request: HttpServerRequest.HttpServerRequest) =>
      Effect.map(limiter.count(policyForAddress(clientAddress(request, trustProxy))), (counted) => counted.refusal)

    const tooMany = (req: PageRequest, url: string, seconds: number) =>
      page(
        429,
        plainShell(req, {
          title: pageText(req.lang, "too_many"),
          description: pageText(req.lang, "too_many_detail"),
          url,
          body: `<h1>${escapeHtml(pageText(req.lang, "too_many"))}</h1>\n<p>${escapeHtml(pageText(req.lang, "too_many_detail"))}</p>`
        }),
        { "retry-after": String(seconds), "cache-control": "no-store" }
      )

    /** The page a request asks for, or none (the API answers it). */
    const answer = (request: HttpServerRequest.HttpServerRequest): Effect.Effect<HttpServerResponse.HttpServerResponse> | undefined => {
      if (request.method !== "GET" && request.method !== "HEAD") return undefined
      // The query whole: a redirect keeps it, `?` in it included.
      const queryAt = request.url.indexOf("?")
      const rawPath = queryAt === -1 ? request.url : request.url.slice(0, queryAt)
      const query = queryAt === -1 ? "" : request.url.slice(queryAt + 1)
      if (prefix !== "" && !rawPath.startsWith(`${prefix}/`)) return undefined
      const path = rawPath.slice(prefix.length) || "/"
      if (path === PAGES_CSS_PATH) return Effect.succeed(cssResponse(request))
      const route = routeOf(path)
      if (path !== "/" && route === undefined) return undefined
      if (path === "/" && prefix !== "") return undefined
      const params = new URLSearchParams(query)
      const req: PageRequest = {
        lang: langOfAcceptLanguage(request.headers["accept-language"]),
        theme: themeOf(params.get("theme")),
        prefix
      }
      const unavailable = (): HttpServerResponse.HttpServerResponse => {
        const title = pageText(req.lang, "unavailable")
        return page(503, plainShell(req, { title, description: title, url: rawPath, body: `<h1>${escapeHtml(title)}</h1>` }), {
          "cache-control": "no-store",
          "retry-after": "5"
        })
      }
      return Effect.gen(function*() {
        if (path === "/") {
          const host = requestHost(request.headers, trustProxy)
          const tenant = hostTenant === undefined ? Option.none() : yield* hostTenant(request.headers)
          if (Option.isNone(tenant) || host === undefined) return rootResponse(request)
          const refused = yield* refusalOfCount(request)
          if (refused !== undefined) return tooMany(req, `https://${host}/`, refused.retry_after_seconds)
          return yield* domainRoot(req, tenant.value, host)
        }
        const refused = yield* refusalOfCount(request)
        if (refused !== undefined) return tooMany(req, rawPath, refused.retry_after_seconds)
        if (route!._tag === "Manage") {
          const url = (yield* Effect.option(Effect.flatMap(manage.open(route!.token), (o) => manage.publicBase(o.tenant)))).pipe(
            Option.getOrElse(() => "")
          ) + path
          return yield* managePage(req, route!.token, url)
        }
        return yield* bookPage(req, route!, rawPath, query)
      }).pipe(
        // Storage trouble: a page that says so (the API's own problems say more).
        Effect.catchAllCause((cause) => Effect.as(Effect.logWarning("hosted page failed", cause), unavailable()))
      )
    }

    return <E, R>(app: HttpApp.Default<E, R>): HttpApp.Default<E, R> =>
      Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => answer(request) ?? app)
  })
