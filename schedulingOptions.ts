/**
 * The options of `createScheduling`, as one schema: the types derive from it and every call
 * is checked against it, so a JavaScript caller's slip (`{ sqlite: "app.db" }` beside
 * `storage`, `storage: "sqlite"`) is a `ValidationError` saying what is accepted, not an
 * instance that quietly runs in memory.
 */
import { Either, Schema } from "effect"
import type { CalendarSyncLoopOptions } from "./adapters/calendars/syncLoop.js"
import { POSTGRES_URL } from "./adapters/cli/storageLocation.js"
import type { WebhookDispatcherOptions } from "./adapters/webhooks/dispatcher.js"
import { type SlotwiseError, toSlotwiseError } from "./library.js"
import { ValidationFailed } from "./src/domain/errors.js"
import { Reminders } from "./src/reminders/reminder.js"
import { decodeInputEither } from "./src/domain/validation.js"

export const STORAGE_FORMS = `"memory", { sqlite: "<file>" } or { postgres: "postgres://…" }`

/**
 * Where data lives: in this process's memory, a SQLite database file (created if missing),
 * or a PostgreSQL database (tables created and migrated at start), which any number of
 * processes may share.
 */
export const StorageChoice = Schema.Union(
  Schema.Literal("memory"),
  Schema.Struct({ sqlite: Schema.NonEmptyString }),
  Schema.Struct({ postgres: Schema.String.pipe(Schema.pattern(POSTGRES_URL)) })
).annotations({ message: () => `must be ${STORAGE_FORMS}` })
export type StorageChoice = typeof StorageChoice.Type

/** `true`, `false` or an adapter's options object (checked there: here only that it is an object). */
const switchOrOptions = <A extends object>(what: string) =>
  Schema.Union(
    Schema.Boolean,
    Schema.declare((u: unknown): u is A => typeof u === "object" && u !== null && !Array.isArray(u))
  ).annotations({ message: () => `must be true, false or ${what}` })
const PositiveNumber = Schema.Number.pipe(Schema.positive({ message: () => "must be a positive number" }))

export const SchedulingOptions = Schema.Struct({
  /**
   * `"memory"` (the default), `{ sqlite: file }` (created if missing) or
   * `{ postgres: "postgres://…" }` (tables created and migrated at start; several processes
   * may share the database).
   */
  storage: Schema.optional(StorageChoice),
  /**
   * Run the webhook dispatcher in this instance (off by default): `true`, or its options
   * (`{ allowPrivate: true }` to deliver to receivers on localhost or a private network).
   */
  webhooks: Schema.optional(switchOrOptions<WebhookDispatcherOptions>("the dispatcher's options")),
  /** The DNS resolver (`host:port`) that verifies custom domains' TXT records; default: the system's. */
  dnsServer: Schema.optional(Schema.NonEmptyString),
  /**
   * Where your app serves Slotwise (`https://book.example.com`): manage links
   * (`{publicUrl}/manage/{token}`, unless the account has a verified custom domain) and
   * calendar feed URLs (`{publicUrl}/calendar/…`) start with it. Default `http://127.0.0.1:8080`.
   */
  publicUrl: Schema.optional(
    Schema.String.pipe(Schema.pattern(/^https?:\/\/[^/]/i, { message: () => "must be an http:// or https:// URL" }))
  ),
  /**
   * Read staff members' external calendars in this instance (default `true`): `false` when
   * another process on the same database does, or the loop's options (`pollMs`).
   */
  calendarSync: Schema.optional(switchOrOptions<CalendarSyncLoopOptions>("the sync loop's options")),
  /** Minutes between two reads of each calendar feed (default 10). */
  calendarSyncMinutes: Schema.optional(PositiveNumber),
  /**
   * Let webhook URLs and calendar feeds name private, loopback and link-local addresses
   * (development, tests); the dispatcher's own `allowPrivate` does the same.
   */
  allowPrivateAddresses: Schema.optional(Schema.Boolean),
  /**
   * The account-level reminders (`[{ offset_minutes }]`, up to 5, 5 to 43 200 minutes):
   * every confirmed booking of a service without its own `reminders` emits
   * `booking.reminder` at start − offset. Default: none.
   */
  reminders: Schema.optional(Reminders)
})
export type SchedulingOptions = typeof SchedulingOptions.Encoded

const decodeOptions = decodeInputEither(SchedulingOptions)

/** `options` checked, or the `ValidationError` naming each wrong option (and, for storage, the forms it takes). */
export const checkSchedulingOptions = (options: unknown): Either.Either<typeof SchedulingOptions.Type, SlotwiseError> =>
  Either.mapLeft(decodeOptions(options), ({ detail, errors }) => {
    // `{ sqlite: file }` beside `storage`, or storage among several wrong options: the forms it takes.
    const aboutStorage = errors.some((e) => ["storage", "sqlite", "postgres"].includes(e.path)) && !detail.includes(STORAGE_FORMS)
    return toSlotwiseError(
      new ValidationFailed({
        errors,
        detail: `createScheduling: ${detail}${aboutStorage ? `; the storage option takes ${STORAGE_FORMS}` : ""}`
      })
    )
  })
