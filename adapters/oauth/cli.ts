/**
 * `slotwise users create`: an account user, offline. The password is read from standard
 * input (`--password-stdin`), never from the arguments, which other users of the machine
 * can see in the process list and which shells keep in their history.
 */
import { Cause, Effect, Layer, ManagedRuntime } from "effect"
import { parseArgs } from "node:util"
import { isSlotwiseFailure, toProblem } from "../../src/domain/errors.js"
import type { Storage } from "../../src/ports/storage.js"
import { Users } from "../../src/users/Users.js"
import { OAuthServicesLive } from "./services.js"

export const USERS_CREATE_HELP =
  `  --database <file|url>          a SQLite database file or a postgres:// URL; default ./slotwise.db [$SLOTWISE_DATABASE_URL]
  --account <acc_…>              the account (required; slotwise accounts list shows them)
  --email <email>                the user's email, unique in the account (required)
  --name <name>                  the user's name (default: the email)
  --role <role>                  owner | member (default member)
  --password-stdin               read the password from standard input (required; one line)
  --json                         print the user as JSON
`

/** The storage a command opens, and how it names it in its output and errors. */
export interface OpenedStorage {
  readonly layer: Layer.Layer<Storage, unknown>
  readonly name: string
}

export interface UsersCreateIO {
  /**
   * The storage `--database` names (undefined: not given), resolved as every command
   * resolves it (main.ts passes the command line's rule).
   */
  readonly storage: (database: string | undefined) => OpenedStorage
  readonly stdin: AsyncIterable<string | Uint8Array>
  readonly out: (text: string) => void
  readonly err: (text: string) => void
}

const readPassword = async (stdin: AsyncIterable<string | Uint8Array>): Promise<string> => {
  const chunks: Array<Buffer> = []
  let size = 0
  for await (const chunk of stdin) {
    const buffer = typeof chunk === "string" ? Buffer.from(chunk) : Buffer.from(chunk)
    size += buffer.length
    if (size > 4096) throw new Error("the password on standard input is longer than 4096 bytes")
    chunks.push(buffer)
  }
  // `echo pw |` and here-strings end the line: that newline is not part of the password.
  return Buffer.concat(chunks).toString("utf8").replace(/\r?\n$/, "")
}

/** Runs `users create` with `args` (after the two command words); returns the exit code. */
export const usersCreate = async (args: ReadonlyArray<string>, io: UsersCreateIO): Promise<number> => {
  let values
  try {
    values = parseArgs({
      args: [...args],
      strict: true,
      options: {
        database: { type: "string" },
        account: { type: "string" },
        email: { type: "string" },
        name: { type: "string" },
        role: { type: "string" },
        "password-stdin": { type: "boolean" },
        json: { type: "boolean" },
        help: { type: "boolean", short: "h" }
      }
    }).values
  } catch (error) {
    io.err(`slotwise: ${(error as Error).message}\n${USERS_CREATE_HELP}`)
    return 2
  }
  if (values.help) {
    io.out(USERS_CREATE_HELP)
    return 0
  }
  const missing = [
    values.account === undefined && "--account",
    values.email === undefined && "--email",
    !values["password-stdin"] && "--password-stdin"
  ]
    .filter((m): m is string => m !== false)
  if (missing.length > 0) {
    io.err(`slotwise: ${missing.join(", ")} required (the password is read from standard input only)\n`)
    return 2
  }
  let password: string
  try {
    password = await readPassword(io.stdin)
  } catch (error) {
    io.err(`slotwise: ${(error as Error).message}\n`)
    return 2
  }
  const storage = io.storage(values.database)
  const runtime = ManagedRuntime.make(OAuthServicesLive.pipe(Layer.provide(storage.layer)))
  try {
    const exit = await runtime.runPromiseExit(Effect.flatMap(Users, (users) =>
      users.create(values.account!, {
        email: values.email!,
        name: values.name ?? values.email!,
        password,
        ...(values.role !== undefined ? { role: values.role as "member" } : {})
      })))
    if (exit._tag === "Failure") {
      const error = Cause.squash(exit.cause)
      const problem = isSlotwiseFailure(error) ? toProblem(error) : undefined
      io.err(`slotwise: ${isSlotwiseFailure(error) ? error.detail : String(error)} (${storage.name})\n`)
      for (const e of problem?.errors ?? []) io.err(`  ${e.path}: ${e.message}\n`)
      return 1
    }
    const user = exit.value
    io.out(
      values.json
        ? `${JSON.stringify(user, null, 2)}\n`
        : `created user ${user.id} <${user.email}> (${user.role}) in ${user.account_id} (${storage.name})\n`
    )
    return 0
  } finally {
    await runtime.dispose()
  }
}
