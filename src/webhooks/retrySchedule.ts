/**
 * The delivery rules of docs/api.md §4, in one place: what an attempt's outcome means and when
 * the next attempt is due. Only a 2xx is success; 410 Gone disables the endpoint; 429 waits
 * for its Retry-After; anything else (other statuses, redirects, timeouts, refused
 * connections, blocked addresses) retries on the schedule below, then gives up as `failed`
 * until retried by hand.
 */

const SECOND = 1000
const MINUTE = 60 * SECOND
const HOUR = 60 * MINUTE

/** Waits before the 2nd … 8th attempt (docs/api.md §4: about 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h). */
export const RETRY_DELAYS_MS: ReadonlyArray<number> = [5 * SECOND, 5 * MINUTE, 30 * MINUTE, 2 * HOUR, 5 * HOUR, 10 * HOUR, 10 * HOUR]

/** Attempts in one automatic schedule: the first and one per delay. */
export const MAX_ATTEMPTS = RETRY_DELAYS_MS.length + 1

/** Each wait is scaled by a random factor in [1 − JITTER, 1 + JITTER]. */
export const JITTER = 0.1

/** The longest Retry-After honoured; a later one is capped to this. */
export const MAX_RETRY_AFTER_MS = 10 * HOUR

/** What a delivery attempt produced, as the transport saw it. */
export type AttemptResult =
  | {
    readonly _tag: "Response"
    readonly status: number
    readonly latency_ms: number
    /** The Retry-After header, if any. */
    readonly retry_after?: string | undefined
    /** A short excerpt of a non-2xx body, for the attempt's error. */
    readonly body_excerpt?: string | undefined
  }
  | {
    readonly _tag: "Error"
    readonly error: string
    readonly latency_ms: number
  }

export type Verdict =
  | { readonly _tag: "Succeeded" }
  | { readonly _tag: "Retry"; readonly delay_ms: number }
  | { readonly _tag: "Failed" }
  /** 410 Gone: the receiver wants no more; the endpoint is disabled. */
  | { readonly _tag: "Gone" }

export const isSuccess = (result: AttemptResult): boolean => result._tag === "Response" && result.status >= 200 && result.status < 300

/** Delta seconds or an HTTP date, as milliseconds from `nowMs`; undefined when unusable. */
export const parseRetryAfter = (header: string | undefined, nowMs: number): number | undefined => {
  if (header === undefined) return undefined
  const text = header.trim()
  if (/^\d+$/.test(text)) return Math.min(Number(text) * SECOND, MAX_RETRY_AFTER_MS)
  // Every HTTP-date form starts with the day's name; `Date.parse` alone takes "-5" or "7.5" as dates.
  if (!/^(mon|tue|wed|thu|fri|sat|sun)/i.test(text)) return undefined
  const at = Date.parse(text)
  if (Number.isNaN(at)) return undefined
  return Math.min(Math.max(0, at - nowMs), MAX_RETRY_AFTER_MS)
}

/** The error text an attempt leaves on the delivery and the endpoint. */
export const describeResult = (result: AttemptResult): string | null => {
  if (result._tag === "Error") return result.error
  if (isSuccess(result)) return null
  const excerpt = result.body_excerpt === undefined || result.body_excerpt === "" ? "" : `: ${result.body_excerpt}`
  if (result.status >= 300 && result.status < 400) return `HTTP ${result.status} (redirects are not followed)${excerpt}`
  return `HTTP ${result.status}${excerpt}`
}

/**
 * What follows an attempt. `attemptsInRound` counts the automatic attempts made so far,
 * this one included; `random` is uniform in [0, 1) for the jitter.
 */
export const decide = (input: {
  readonly result: AttemptResult
  readonly attemptsInRound: number
  readonly manual: boolean
  readonly nowMs: number
  readonly random: number
}): Verdict => {
  const { result } = input
  if (isSuccess(result)) return { _tag: "Succeeded" }
  if (result._tag === "Response" && result.status === 410) return { _tag: "Gone" }
  if (input.manual || input.attemptsInRound >= MAX_ATTEMPTS) return { _tag: "Failed" }
  if (result._tag === "Response" && result.status === 429) {
    const wait = parseRetryAfter(result.retry_after, input.nowMs)
    if (wait !== undefined) return { _tag: "Retry", delay_ms: Math.max(wait, SECOND) }
  }
  const base = RETRY_DELAYS_MS[Math.max(0, input.attemptsInRound - 1)]!
  return { _tag: "Retry", delay_ms: Math.round(base * (1 - JITTER + 2 * JITTER * input.random)) }
}
