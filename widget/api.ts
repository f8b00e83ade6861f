/**
 * The widget's client of the /v1 API: a publishable key as bearer, problems turned into
 * `ApiError`s, a rate limit's `429` waited out (Retry-After) a few times before giving up.
 */

export interface Slot {
  readonly start: string
  readonly end: string
  /** Absent on a start that a team shares (round robin, collective): `staff_ids` says who is free. */
  readonly staff_id?: string | undefined
  readonly staff_ids?: ReadonlyArray<string> | undefined
  readonly remaining: number
}
export interface Question {
  readonly id: string
  readonly label: string
  readonly type: "text" | "long_text" | "email" | "phone" | "number" | "select" | "multi_select" | "checkbox"
  readonly required: boolean
  readonly options?: ReadonlyArray<string>
  readonly help?: string
}
export interface Service {
  readonly id: string
  readonly name: string
  readonly description: string | null
  readonly duration_minutes: number
  readonly price: { readonly amount: number; readonly currency: string } | null
  readonly staff_ids: ReadonlyArray<string>
  readonly active: boolean
  readonly questions?: ReadonlyArray<Question>
  /** Who attends (absent from older servers: `chosen`). */
  readonly assignment?: "chosen" | "round_robin" | "collective"
  /** How many occurrences a recurring booking may have; 0 or absent: no repeat choice. */
  readonly max_occurrences?: number
}
export interface StaffMember {
  readonly id: string
  readonly name: string
  readonly active: boolean
}
export interface Hold {
  readonly id: string
  readonly start: string
  readonly end: string
  readonly staff_id: string
  readonly expires_at: string
  readonly created_at: string
}
export interface Booking {
  readonly id: string
  readonly start: string
  readonly end: string
  readonly status: string
  readonly staff_id: string
  readonly service_id: string
  /** Everyone who attends: one member, or all of a collective service's. */
  readonly staff_ids?: ReadonlyArray<string>
  readonly series_id?: string | null
  readonly [field: string]: unknown
}
export interface WidgetConfig {
  readonly account_name: string
  readonly environment: "sandbox" | "production"
  readonly branding_required: boolean
  /** The account's branding: defaults an explicit widget option overrides (absent from older servers). */
  readonly display_name?: string | null
  readonly logo_url?: string | null
  readonly primary_color?: string | null
  readonly powered_by?: boolean
}
interface Page<A> {
  readonly data: ReadonlyArray<A>
  readonly has_more?: boolean
  readonly next_cursor?: string | null
}

/** A failed call: `status` 0 when the network (or CORS) failed before any answer. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly problem: Record<string, unknown> = {}
  ) {
    super(message)
  }
  get alternatives(): ReadonlyArray<Slot> {
    const list = this.problem.alternatives
    return Array.isArray(list) ? list as Array<Slot> : []
  }
}

/** A booking as its client sees it through a manage link (`GET /v1/manage/{token}`). */
export interface ManagedBooking {
  readonly id: string
  readonly status: string
  readonly start: string
  readonly end: string
  readonly time_zone: string
  readonly service: { readonly name: string; readonly duration_minutes: number; readonly cancellation_notice_minutes: number }
  readonly staff: { readonly name: string }
  readonly answers?: ReadonlyArray<{ readonly question_id: string; readonly label: string; readonly type: string; readonly value: unknown }>
  readonly cancellation_reason: string | null
  readonly can_cancel: boolean
  readonly can_reschedule: boolean
  readonly cancel_refusal: { readonly code: string; readonly detail: string } | null
  readonly reschedule_refusal: { readonly code: string; readonly detail: string } | null
}

export interface ClientOptions {
  readonly base: string
  /** The publishable key; empty for a manage link, whose token is the credential. */
  readonly key: string
  /** Told before waiting out a 429, with the seconds to wait. */
  readonly onWait: (seconds: number) => void
  readonly signal: AbortSignal
}

const MAX_WAITS = 3

export const makeClient = (options: ClientOptions) => {
  const call = async <A>(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<A> => {
    for (let attempt = 0;; attempt++) {
      let response: Response
      try {
        response = await fetch(options.base + path, {
          method,
          headers: {
            ...(options.key === "" ? {} : { authorization: `Bearer ${options.key}` }),
            ...(body === undefined ? {} : { "content-type": "application/json" }),
            ...headers
          },
          body: body === undefined ? null : JSON.stringify(body),
          credentials: "omit",
          cache: "no-store",
          signal: options.signal
        })
      } catch (error) {
        if (options.signal.aborted) throw error
        throw new ApiError(0, "network_error", String(error))
      }
      // A rate limit says when to try again; other 429s (a hold limit) are answered at once.
      const retryAfter = response.headers.get("retry-after")
      if (response.status === 429 && retryAfter !== null && attempt < MAX_WAITS) {
        const seconds = Math.min(60, Math.max(1, Number(retryAfter) || 1))
        options.onWait(seconds)
        await new Promise<void>((resolve, reject) => {
          const timer = setTimeout(resolve, seconds * 1000)
          options.signal.addEventListener("abort", () => (clearTimeout(timer), reject(options.signal.reason)), { once: true })
        })
        continue
      }
      const text = await response.text()
      let json: any = undefined
      try {
        json = text === "" ? undefined : JSON.parse(text)
      } catch {
        json = undefined
      }
      if (response.ok) return json as A
      const problem = typeof json === "object" && json !== null ? json as Record<string, unknown> : {}
      throw new ApiError(
        response.status,
        typeof problem.code === "string" ? problem.code : `http_${response.status}`,
        typeof problem.detail === "string" ? problem.detail : response.statusText,
        problem
      )
    }
  }
  const q = (params: Record<string, string | undefined>) =>
    new URLSearchParams(Object.entries(params).filter((e): e is [string, string] => e[1] !== undefined)).toString()

  /** Every page of a list (accounts rarely have more than one). */
  const all = async <A>(path: string): Promise<ReadonlyArray<A>> => {
    const items: Array<A> = []
    for (let cursor: string | null | undefined = undefined; ;) {
      const page: Page<A> = await call<Page<A>>("GET", `${path}?${q({ limit: "100", cursor: cursor ?? undefined })}`)
      items.push(...page.data)
      if (page.has_more !== true || !page.next_cursor) return items
      cursor = page.next_cursor
    }
  }

  return {
    config: () => call<WidgetConfig>("GET", "/v1/widget/config"),
    services: () => all<Service>("/v1/services"),
    service: (id: string) => call<Service>("GET", `/v1/services/${encodeURIComponent(id)}`),
    staff: () => all<StaffMember>("/v1/staff"),
    slots: (params: { service_id: string; staff_id?: string | undefined; start: string; end: string }) =>
      call<Page<Slot>>("GET", `/v1/availability/slots?${q(params)}`).then((p) => p.data),
    hold: (body: { service_id: string; staff_id?: string; start: string; ttl_seconds: number }) =>
      call<Hold>("POST", "/v1/availability/holds", body),
    release: (id: string) => call<Hold>("DELETE", `/v1/availability/holds/${encodeURIComponent(id)}`),
    book: (body: Record<string, unknown>, idempotencyKey: string) =>
      call<Booking>("POST", "/v1/bookings", body, { "idempotency-key": idempotencyKey }),
    manage: (token: string) => call<ManagedBooking>("GET", `/v1/manage/${encodeURIComponent(token)}`),
    manageSlots: (token: string, range: { start: string; end: string }) =>
      call<Page<Slot>>("GET", `/v1/manage/${encodeURIComponent(token)}/slots?${q(range)}`).then((p) => p.data),
    manageCancel: (token: string, reason: string | undefined) =>
      call<ManagedBooking>("POST", `/v1/manage/${encodeURIComponent(token)}/cancel`, reason === undefined ? {} : { reason }),
    manageReschedule: (token: string, start: string) =>
      call<ManagedBooking>("POST", `/v1/manage/${encodeURIComponent(token)}/reschedule`, { start }),
    /** Whether the server answers at all (its widget.js is readable from any origin). */
    reachable: () =>
      fetch(`${options.base}/widget.js`, { method: "HEAD", credentials: "omit", cache: "no-store", signal: options.signal })
        .then((r) => r.ok || r.status === 304, () => false)
  }
}
export type Client = ReturnType<typeof makeClient>
