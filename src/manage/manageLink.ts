/**
 * Manage links (docs/api.md §10): a client's credential for one booking, with no account.
 * The token names the booking and its tenant in plain sight (so the lookup is one read, never
 * a scan) and proves itself with an HMAC-SHA256 under the deployment's secret over the tenant,
 * the booking id and the booking's `manage_version`; rotating bumps the version, so every
 * earlier token stops verifying everywhere at once. What the client may do is decided here.
 */
import { Schema } from "effect"
import { type Booking, BookingStatus, transitionRefusal } from "../bookings/booking.js"
import type { Environment } from "../domain/common.js"
import { Instant, Name, optional, TimeZone, toMillis } from "../domain/common.js"
import { Id } from "../domain/ids.js"
import type { Service } from "../services/service.js"
import type { TenantId } from "../ports/tenant.js"

const MINUTE = 60_000
const ULID = "[0-9A-HJKMNP-TV-Z]{26}"
/** Bytes of the MAC kept in a token: 192 bits, above the 128 the contract asks for. */
export const MAC_BYTES = 24
/** Base64url characters of those bytes. */
const MAC_CHARS = 32
/** `<booking ulid>.<account ulid>.<t|l><mac>`: 87 characters, under the router's 100 per segment. */
const TOKEN = new RegExp(`^(${ULID})\\.(${ULID})\\.([tl])([A-Za-z0-9_-]{${MAC_CHARS}})$`)
export const MAX_TOKEN_LENGTH = 26 + 1 + 26 + 1 + 1 + MAC_CHARS

/** The one answer for every token that opens no booking: unknown, rotated, malformed, foreign. */
export const UNKNOWN_LINK_DETAIL = "no booking for this manage link"
export const MANAGE_PATH = "/v1/manage/"

/** The booking a token names, and the MAC it claims; the MAC is still to be checked. */
export interface TokenClaim {
  readonly booking_id: string
  readonly tenant: TenantId
  readonly mac: string
}

const ENVIRONMENT_CODE: Record<Environment, "t" | "l"> = { sandbox: "t", production: "l" }

/** The token's claim, or `undefined` for anything that is not exactly a token's shape. */
export const parseToken = (token: string): TokenClaim | undefined => {
  if (token.length !== MAX_TOKEN_LENGTH) return undefined
  const m = TOKEN.exec(token)
  if (m === null) return undefined
  return {
    booking_id: `bkg_${m[1]}`,
    tenant: { account_id: `acc_${m[2]}`, environment: m[3] === "t" ? "sandbox" : "production" },
    mac: m[4]!
  }
}

export const formatToken = (tenant: TenantId, bookingId: string, mac: string): string =>
  `${bookingId.slice(4)}.${tenant.account_id.slice(4)}.${ENVIRONMENT_CODE[tenant.environment]}${mac}`

/** What the MAC covers: everything the token is bound to, in an unambiguous layout. */
export const macMessage = (tenant: TenantId, bookingId: string, version: number): string =>
  `slotwise-manage-link/v1\n${tenant.account_id}\n${tenant.environment}\n${bookingId}\n${version}`

/** A booking's link generation: 1 until the first rotation (bookings made before links had none). */
export const manageVersionOf = (booking: Pick<Booking, "manage_version">): number => booking.manage_version ?? 1

/** The deployment's MAC key, shared by every instance through storage; never leaves the server. */
export interface DeploymentSecret {
  /** The secret's purpose, one record each. */
  readonly id: string
  /** Base64url of 32 random bytes. */
  readonly secret: string
  readonly created_at: string
}

export const MANAGE_LINK_SECRET_ID = "manage_links"
export const SECRET_BYTES = 32

/** Why a client may not act, in words and as a code the page can switch on. */
export const ClientRefusal = Schema.Struct({
  code: Schema.Literal("notice_period_passed", "invalid_transition").annotations({
    description: "`notice_period_passed`: the booking starts within the service's cancellation notice; " +
      "`invalid_transition`: the booking is final (cancelled, completed, no-show)"
  }),
  detail: Schema.String
}).annotations({ identifier: "ClientRefusal" })
export type ClientRefusal = typeof ClientRefusal.Type

export const cancellationNoticeOf = (service: Pick<Service, "cancellation_notice_minutes">): number =>
  service.cancellation_notice_minutes ?? 0

/**
 * Why the client may not cancel or move `booking` at `now`, if it may not: the status rules
 * first (a final booking), then the service's cancellation notice.
 */
export const clientRefusal = (
  action: "cancel" | "reschedule",
  booking: Pick<Booking, "status" | "start">,
  service: Pick<Service, "cancellation_notice_minutes">,
  now: number
): ClientRefusal | undefined => {
  const start = toMillis(booking.start)
  const refusal = transitionRefusal(action, booking.status, start, now)
  if (refusal !== undefined) return { code: "invalid_transition", detail: refusal }
  const notice = cancellationNoticeOf(service)
  if (start - now < notice * MINUTE) {
    return {
      code: "notice_period_passed",
      detail: `the booking starts in less than ${notice} minutes: it can no longer be ${action === "cancel" ? "cancelled" : "moved"} online`
    }
  }
  return undefined
}

const Answer = Schema.Struct({
  question_id: Schema.String,
  label: Schema.String,
  type: Schema.String,
  value: Schema.Unknown
}).annotations({ identifier: "ManagedAnswer" })

/** The booking as its client may see it through a manage link: no ids of other resources, no notes. */
export const ManagedBooking = Schema.Struct({
  object: Schema.Literal("managed_booking"),
  id: Id("booking"),
  status: BookingStatus,
  start: Instant,
  end: Instant,
  time_zone: TimeZone.annotations({ description: "the client's time zone if known, else the staff member's: show times in it" }),
  service: Schema.Struct({
    name: Name,
    duration_minutes: Schema.Int,
    cancellation_notice_minutes: Schema.Int.annotations({
      description: "online cancelling and moving close this many minutes before the start"
    })
  }),
  staff: Schema.Struct({ name: Name }),
  client: Schema.Struct({ name: Name }),
  answers: optional(Schema.Array(Answer).annotations({ description: "the client's answers to the service's questions" })),
  cancellation_reason: Schema.NullOr(Schema.String),
  can_cancel: Schema.Boolean,
  can_reschedule: Schema.Boolean,
  cancel_refusal: Schema.NullOr(ClientRefusal).annotations({ description: "why `can_cancel` is false; null when true" }),
  reschedule_refusal: Schema.NullOr(ClientRefusal).annotations({ description: "why `can_reschedule` is false; null when true" })
}).annotations({ identifier: "ManagedBooking", description: "A booking as its client sees it through a manage link." })
export type ManagedBooking = typeof ManagedBooking.Type

export const ManageSlotQuery = Schema.Struct({
  start: Instant,
  end: Instant
}).annotations({ identifier: "ManageSlotQuery" })
export type ManageSlotQuery = typeof ManageSlotQuery.Encoded

export const ManageCancel = Schema.Struct({
  reason: optional(
    Schema.NullOr(Schema.String.pipe(Schema.maxLength(1000))).annotations({
      description: "why the client cancels, up to 1000 characters"
    })
  )
}).annotations({ identifier: "ManageCancel" })
export type ManageCancel = typeof ManageCancel.Encoded

export const ManageReschedule = Schema.Struct({
  start: Instant.annotations({ description: "a free start of the same service and staff member, from the slots" })
}).annotations({ identifier: "ManageReschedule" })
export type ManageReschedule = typeof ManageReschedule.Encoded

/** A booking's link: the page's address and the bare token in it. */
export const ManageLink = Schema.Struct({
  url: Schema.String.annotations({ description: "`{public_url}/manage/{token}`" }),
  token: Schema.String
}).annotations({ identifier: "ManageLink" })
export type ManageLink = typeof ManageLink.Type

// The manage endpoints' limits are rate-limit policy; kept importable from here.
export { MANAGE_LIMITS, manageAddressPolicy, manageWritePolicy } from "../ratelimit/policy.js"
