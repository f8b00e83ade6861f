/**
 * The widget's client of the /v1 API: a publishable key as bearer, problems turned into
 * `ApiError`s, a rate limit's `429` waited out (Retry-After) a few times before giving up.
 */

import type { Booking as BookingSchema } from "../src/bookings/booking.js"
import type { Hold as HoldSchema } from "../src/availability/hold.js"
import type { ManagedBooking as ManagedBookingSchema } from "../src/manage/manageLink.js"
import type { Question as QuestionSchema } from "../src/services/question.js"
import type { PublicService } from "../src/services/service.js"
import type { Slot as SlotSchema } from "../src/domain/slot.js"
import type { PublicStaff } from "../src/staff/member.js"
import type { WidgetConfig as WidgetConfigSchema } from "../src/accounts/widgetConfig.js"

// The wire shapes are the core schemas' encoded sides, imported as types only: the bundle
// carries none of the core's code.

/** `T` with the keys `K` possibly absent: fields an older server, or some answers, leave out. */
type Absent<T, K extends keyof T> = Omit<T, K> & { readonly [P in K]?: T[P] | undefined }

/** `staff_id` is absent on a start that a team shares (round robin, collective): `staff_ids` says who is free. */
export type Slot = Absent<typeof SlotSchema.Encoded, "staff_id" | "staff_ids">
export type Question = typeof QuestionSchema.Encoded
/** `assignment` (`chosen` when absent), `max_occurrences` and `questions` are absent from older servers. */
export type Service = Absent<typeof PublicService.Encoded, "questions" | "assignment" | "max_occurrences">
export type StaffMember = typeof PublicStaff.Encoded
export type Hold = typeof HoldSchema.Encoded
/** `staff_ids` and `series_id` are absent from older servers. */
export type Booking = Absent<typeof BookingSchema.Encoded, "staff_ids" | "series_id">
/** The account's branding fields and `powered_by` are absent from older servers. */
export type WidgetConfig = Absent<typeof WidgetConfigSchema.Encoded, "display_name" | "logo_url" | "primary_color" | "powered_by">
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
export type ManagedBooking = typeof ManagedBookingSchema.Encoded

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
      let json: any
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
    for (let cursor: string | null | undefined = undefined;;) {
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
    /** A series (a body with `recurrence`): answered with the `booking_series`. */
    bookSeries: (body: Record<string, unknown>, idempotencyKey: string) =>
      call<Record<string, unknown>>("POST", "/v1/booking-series", body, { "idempotency-key": idempotencyKey }),
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
